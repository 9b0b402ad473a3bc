/**
 * The drafts a form effect computes on (CONTRACTS C1 "Form effects"): the record of the form — a
 * draft copy of the saved record overlaid with the form's values, or a new draft with them —, the
 * lines the form holds for it (each a draft: new ones from their values, saved ones copied and
 * overlaid), and, when a change reaches it, the record a line belongs to (a line's order: a draft
 * copy whose lines are the saved ones with this line in place of its saved row). Drafts write
 * nothing when assigned (`orm/record-batch.ts`), so effect methods and computes run on them as on
 * records, and links between them are the drafts themselves: a draft line's order is the draft
 * order, whose total sums the draft lines.
 *
 * What the form sends is checked as a write would check it — each value converted by its field
 * (400 naming it), links to records the caller can read (refused like missing ones) — except
 * `required`, since a form is incomplete while it is edited. Values of fields with a setter are
 * not applied: a setter may hash, look up or write, which a preview must not do.
 */
import { BadRequest, NotFound } from '../errors.js';
import { missingReference } from '../orm/missing-reference.js';
import { withEnv } from '../orm/env.js';
import type { Field } from '../orm/fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField } from '../orm/fields/relational-fields.js';
import type { Model } from '../orm/model.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { RecordBatch } from '../orm/record-batch.js';
import { asLoaded } from '../orm/write/precompute.js';
import { publicValues } from '../orm/write/write-values.js';
import { assertReadableLinks, type GivenLink } from './readable-links.js';

export interface DraftNode {
  readonly meta: ModelMeta;
  readonly record: Model;
  /** No saved row: its stored computed fields are computed as a create would compute them. */
  readonly isNew: boolean;
  /** The stored values the form holds for it, by field name: what the answer is compared with. */
  readonly baseline: Record<string, unknown>;
  /** Fields whose value stands in this computation: typed by the caller, or set by an effect. */
  kept: Set<string>;
  /** Fields the form gave a value for (defaults do not apply to them). */
  readonly given: ReadonlySet<string>;
  /** Fields the caller changed on a saved line (its given values that differ from the saved ones). */
  readonly changedByCaller: readonly string[];
  /** The record each ManyToOne leads to, once reached (null: none, or not readable by the caller). */
  readonly parents: Map<string, DraftNode | null>;
  /** The lines the form holds, by OneToMany field. */
  readonly lines: Map<string, FormLines>;
}

export interface FormLines {
  readonly field: OneToManyField;
  readonly nodes: readonly DraftNode[];
  /** The lines as the form sent them (ids or objects), for the answer. */
  readonly sent: readonly unknown[];
}

export interface FormRequest {
  id?: number;
  vals: Record<string, unknown>;
}

export class FormDrafts {
  private constructor(readonly main: DraftNode) {}

  /** The drafts of a form of `meta`: the saved record `id` (as the caller reads it) or a new one. */
  static async build(meta: ModelMeta, request: FormRequest): Promise<FormDrafts> {
    const mode = request.id === undefined ? 'create' : 'update';
    const values = publicValues(meta, request.vals, mode);
    const links: GivenLink[] = [];
    let record: Model;
    if (request.id === undefined) {
      record = RecordBatch.newDrafts(meta, 1)[0]!;
    } else {
      const [saved] = await RecordBatch.load(meta, [request.id]);
      if (!saved) throw new NotFound(`${meta.name} ${request.id} does not exist`);
      record = RecordBatch.draftCopies(meta, [saved])[0]!;
    }
    const main = await draftNode(meta, record, values, request.vals, links);
    for (const [name, items] of Object.entries(values)) {
      const field = meta.fields.get(name);
      if (field instanceof OneToManyField && Array.isArray(items)) {
        main.lines.set(name, await formLines(main, field, items, request.vals[name] as unknown[], links));
      }
    }
    // Checked once the values converted (a wrong type is named first), before anything computes
    // on a record the caller could not have chosen.
    await assertReadableLinks(links);
    await applyDefaults(main);
    for (const lines of main.lines.values()) for (const line of lines.nodes) await applyDefaults(line);
    return new FormDrafts(main);
  }

  /**
   * The record `node` belongs to through `step` (a OneToMany of that record whose inverse is on
   * `node`): a draft copy, read as the caller (none when it cannot read it), whose `step` lines are
   * its saved ones (all of them, as a stored total counts them) with `node` in place of its saved
   * row — or added, for a new line or one moved there.
   */
  async parentOf(node: DraftNode, step: OneToManyField): Promise<DraftNode | null> {
    const inverse = step.inverse;
    if (node.parents.has(inverse.name)) return node.parents.get(inverse.name)!;
    let parent: DraftNode | null = null;
    const parentId = node.record._values[inverse.name];
    const [saved] = typeof parentId === 'number' ? await RecordBatch.load(step.model, [parentId]) : [];
    if (saved) {
      const record = RecordBatch.draftCopies(step.model, [saved])[0]!;
      const stored = (await withEnv({ su: true }, () => record._batch.relation(step, record))) as Model[];
      const own = node.record;
      const ownId = own._values.id;
      const at = stored.findIndex((line) => ownId !== null && line.id === ownId);
      const lines = stored.filter((_, i) => i !== at);
      // A to-many relation lists active records only: an archived draft leaves its parent's lines.
      if (!(node.meta.isArchivable && own._values.active === false)) lines.splice(at < 0 ? lines.length : at, 0, own);
      record._batch.linkDraft(step, record, lines);
      own._batch.linkDraft(inverse, own, record);
      parent = emptyNode(step.model, record);
    }
    node.parents.set(inverse.name, parent);
    return parent;
  }

  /** The lines the form holds whose link to `node` is `inverse` (none when the form sent none). */
  linesOf(node: DraftNode, inverse: ManyToOneField): readonly DraftNode[] {
    for (const lines of node.lines.values()) if (lines.field.inverse === inverse) return lines.nodes;
    return [];
  }
}

function emptyNode(meta: ModelMeta, record: Model): DraftNode {
  return {
    meta, record, isNew: record._values.id === null, baseline: { ...record._values }, kept: new Set(),
    given: new Set(), changedByCaller: [], parents: new Map(), lines: new Map(),
  };
}

/**
 * `values` (already filtered by the write-key rules) assigned on `record`, which the node then
 * stands for. To-many lines are left to `formLines`; links the caller gives are added to `links`.
 */
async function draftNode(
  meta: ModelMeta, record: Model, values: Record<string, unknown>, raw: Record<string, unknown>, links: GivenLink[],
): Promise<DraftNode> {
  const saved = { ...record._values };
  const applied = new Set<string>();
  for (const [name, value] of Object.entries(values)) {
    const field = meta.fields.get(name)!;
    if (field instanceof OneToManyField || field.options.setter) continue;
    (record as unknown as Record<string, unknown>)[name] = value; // converted and checked here (400 naming the field)
    applied.add(name);
    if (field instanceof ManyToOneField) {
      const id = record._values[name];
      if (typeof id === 'number' && id !== saved[name]) links.push({ field, target: field.target, ids: [id] });
    } else if (field instanceof ManyToManyField) {
      links.push({ field, target: field.target, ids: linkIds(value) });
    }
  }
  const node = emptyNode(meta, record);
  const isNew = saved.id === null;
  const given = new Set(applied);
  // The form's values of fields it may not write (a computed subtotal it shows) are what it holds too.
  for (const [name, value] of Object.entries(raw)) {
    const field = meta.fields.get(name);
    if (!field?.column || applied.has(name) || field.options.internal) continue;
    try {
      node.baseline[name] = asLoaded(field, field.toColumn(value));
      given.add(name);
    } catch {
      // Not a value of the field: the form holds nothing usable there.
    }
  }
  // A value typed into an editable computed field stands, as a write keeps it.
  const kept = [...applied].filter((name) => meta.fields.get(name)!.isEditableComputed);
  const changedByCaller = isNew ? [] : [...applied].filter((name) => !sameStored(saved[name], record._values[name]));
  return { ...node, isNew, kept: new Set(kept), given, changedByCaller };
}

/** The lines a form sends for `field` of `parent`: ids of saved lines, objects (with an id: a saved line changed). */
async function formLines(parent: DraftNode, field: OneToManyField, items: unknown[], sent: unknown[], links: GivenLink[]): Promise<FormLines> {
  const target = field.target;
  const savedIds = items.map((item) => (typeof item === 'number' ? item : (item as { id?: unknown }).id))
    .filter((id): id is number => typeof id === 'number');
  const byId = new Map((await RecordBatch.load(target, savedIds)).map((r) => [r.id, r]));
  const missing = savedIds.filter((id) => !byId.has(id));
  if (missing.length) throw missingReference(field, target.name, missing);
  const copies = new Map(RecordBatch.draftCopies(target, [...byId.values()]).map((r) => [r.id, r]));
  const fresh = RecordBatch.newDrafts(target, items.filter((item) => typeof item !== 'number' && (item as { id?: unknown }).id === undefined).length);
  const nodes: DraftNode[] = [];
  const rawLines = Array.isArray(sent) && sent.length === items.length ? sent : items;
  for (const [i, item] of items.entries()) {
    if (item === null || (typeof item !== 'number' && typeof item !== 'object')) {
      throw new BadRequest(`Field '${field.name}' of ${field.model.name} takes lines: objects, or ids of saved lines`);
    }
    const id = typeof item === 'number' ? item : (item as { id?: number }).id;
    const record = id === undefined ? fresh.shift()! : copies.get(id)!;
    const { id: _id, ...vals } = typeof item === 'number' ? {} : (item as Record<string, unknown>);
    // Lines of lines are not part of this form's drafts.
    const own = Object.fromEntries(Object.entries(vals).filter(([name]) => !(target.fields.get(name) instanceof OneToManyField)));
    const rawLine = rawLines[i];
    const node = await draftNode(target, record, own, typeof rawLine === 'object' && rawLine !== null ? rawLine as Record<string, unknown> : {}, links);
    // The line belongs to the form's record: its link reads that draft.
    record._values[field.inverse.name] = parent.record._values.id ?? null;
    record._batch.linkDraft(field.inverse, record, parent.record);
    node.parents.set(field.inverse.name, parent);
    nodes.push(node);
  }
  parent.record._batch.linkDraft(field, parent.record, nodes.map((n) => n.record));
  return { field, nodes, sent: rawLines };
}

/** A new draft's defaults, for the fields the form did not give (as a create applies them). */
async function applyDefaults(node: DraftNode): Promise<void> {
  if (!node.isNew) return;
  for (const f of node.meta.fields.values()) {
    if (!f.column || f.isComputed || f.options.default === undefined || node.given.has(f.name)) continue;
    node.record._values[f.name] = asLoaded(f, f.toColumn(await f.defaultValue()));
  }
}

function linkIds(value: unknown): number[] {
  if (!Array.isArray(value)) return [];
  return value.map((v) => (typeof v === 'object' && v !== null ? (v as { id?: unknown }).id : v)).filter((id): id is number => typeof id === 'number');
}

/** Two stored values as equal as a recompute would find them. */
export function sameStored(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return a == b; // eslint-disable-line eqeqeq
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return String(a) === String(b);
}
