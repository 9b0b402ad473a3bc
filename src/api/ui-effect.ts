/**
 * Form effects (`POST /api/ui-effect/{model}`, spec §4.7, CONTRACTS C1): what changes in a form
 * because one of its fields changed. `{id?, vals, field_name}` — the saved record `id` overlaid
 * with the form's values `vals`, or a new record with them — answers every value that differs from
 * what the form holds once the change is applied (`ui-effect-answer.ts`):
 *
 * 1. The form's drafts are brought up to date as a save would compute them: a new record's (and a
 *    new line's) stored computed fields, with its defaults; a saved line's fields depending on what
 *    the form changed on it.
 * 2. The change: the model's effect method for `field_name` (`_ui_effects`) runs on the draft and
 *    assigns fields — then the effect methods of the fields it set, each once —, and every stored
 *    computed field depending on `field_name` or on what the effects set is recomputed, on the
 *    record, on the lines the form holds and on the record a line belongs to (a line's order
 *    total), transitively (`ui-effect-recompute.ts`). A value typed into an editable computed
 *    field stands unless the change reaches it (a new product prices the line again).
 *
 * Nothing is written: the drafts write nothing when assigned, and the whole computation runs in a
 * transaction the database refuses to write in (`read-only-transaction.ts`), so neither a module's
 * effect method nor a compute can change data. The caller needs the write right on the record
 * (the create right for a new one) and reads what it names as the caller.
 */
import { assertRight } from '../access/record-access.js';
import { assertRecordsAllowed } from '../access/record-checks.js';
import { BadRequest } from '../errors.js';
import { ManyToManyField, OneToManyField } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { readOnlyTransaction } from './read-only-transaction.js';
import { effectAnswer } from './ui-effect-answer.js';
import { FormDrafts, sameStored, type DraftNode } from './ui-effect-drafts.js';
import { DraftRecompute } from './ui-effect-recompute.js';

export interface UiEffectRequest {
  /** The saved record the form edits; absent for a new record. */
  id?: number;
  /** The form's values (the client's whole form, or what it changed). */
  vals?: Record<string, unknown>;
  /** The field whose change the answer follows. */
  field_name?: string;
}

export async function uiEffect(meta: ModelMeta, request: UiEffectRequest): Promise<Record<string, unknown>> {
  const fieldName = request.field_name;
  const field = typeof fieldName === 'string' ? meta.fields.get(fieldName) : undefined;
  if (!field || field.options.internal) throw new BadRequest(`'field_name' must name a field of ${meta.name}`);
  return readOnlyTransaction(async () => {
    if (request.id === undefined) assertRight(meta, 'create');
    else await assertRecordsAllowed(meta, 'write', [request.id]);
    const drafts = await FormDrafts.build(meta, { id: request.id, vals: request.vals ?? {} });
    const recompute = new DraftRecompute(drafts, meta.registry);
    const { main } = drafts;

    // 1. The drafts as a save would compute them before this change.
    if (main.isNew) recompute.scheduleAll(main);
    for (const lines of main.lines.values()) {
      for (const line of lines.nodes) {
        if (line.isNew) recompute.scheduleAll(line);
        for (const name of line.changedByCaller) await recompute.changed(line, name);
      }
    }
    await recompute.run();

    // 2. The change: effects first, then everything depending on the field and on what they set.
    main.kept = new Set([fieldName!]);
    const effectLinks = await runEffects(main, fieldName!, recompute);
    await recompute.changed(main, fieldName!);
    await recompute.run();
    return effectAnswer(drafts, fieldName!, effectLinks);
  });
}

/**
 * Runs the effect method of `fieldName` on the form's record, then those of the fields it set
 * (each at most once); what they set stands for this change and schedules its dependants. Returns
 * the ManyToMany fields they set (answered as lists of links).
 */
async function runEffects(node: DraftNode, fieldName: string, recompute: DraftRecompute): Promise<Set<string>> {
  const links = new Set<string>();
  const queue = [fieldName];
  const ran = new Set<string>();
  const toMany = [...node.meta.fields.values()].filter((f) => f instanceof ManyToManyField || f instanceof OneToManyField);
  while (queue.length) {
    const name = queue.shift()!;
    const method = node.meta.uiEffects.get(name);
    if (!method || ran.has(name)) continue;
    ran.add(name);
    const before = { ...node.record._values };
    const held = new Map(toMany.map((f) => [f.name, node.record._batch.held(node.record, f.name)]));
    await (node.record as unknown as Record<string, () => unknown>)[method]!();
    const set: string[] = [];
    for (const f of node.meta.fields.values()) if (f.column && !sameStored(before[f.name], node.record._values[f.name])) set.push(f.name);
    for (const f of toMany) {
      if (node.record._batch.held(node.record, f.name) === held.get(f.name)) continue;
      set.push(f.name);
      if (f instanceof ManyToManyField) links.add(f.name);
    }
    for (const changed of set) {
      node.kept.add(changed);
      queue.push(changed);
      await recompute.changed(node, changed);
    }
  }
  return links;
}
