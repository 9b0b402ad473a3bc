/**
 * The answer of a form effect: every value of the form's drafts that differs from what the form
 * holds (what it sent, else the saved record), in the shapes a fetch gives them — so a client
 * merges it into the form, and saving the form stores exactly these values.
 *
 * - The record's own fields by name: scalars as fetched, links as `{id, display_name}`, a new
 *   record's defaults too; `display_name` when the name changes; non-stored computed fields whose
 *   `depends` start at a changed field; ManyToMany values an effect set, as lists of links.
 * - The lines the form sent (a OneToMany), when one of them changed: the list as sent, each line
 *   that changed merged with its new values (a save of that list keeps every line).
 * - The record the form's record belongs to through a line relation (a line's `order`), when a
 *   value of it changes: nested under the link, as a fetch of `order.amount_total` shows it —
 *   `{order: {id, amount_total, …}}` — since a line is edited inside its order's form.
 */
import { displayName } from '../orm/display-name.js';
import type { Field } from '../orm/fields/field.js';
import { ManyToManyField, ManyToOneField } from '../orm/fields/relational-fields.js';
import type { Model } from '../orm/model.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { asLoaded } from '../orm/write/precompute.js';
import { LinkNames } from './link-names.js';
import { sameStored, type DraftNode, type FormDrafts } from './ui-effect-drafts.js';

/** A link in an answer being built, replaced by `{id, display_name?, …extra}` once names are loaded. */
class LinkValue {
  constructor(readonly target: ModelMeta, readonly id: number, readonly named: boolean, readonly extra: Record<string, unknown> = {}) {}
}

export async function effectAnswer(drafts: FormDrafts, fieldName: string, effectLinks: ReadonlySet<string>): Promise<Record<string, unknown>> {
  const names = new LinkNames();
  const answer = await mainValues(drafts.main, fieldName, effectLinks, names);
  await names.load();
  return resolve(answer, names) as Record<string, unknown>;
}

async function mainValues(node: DraftNode, fieldName: string, effectLinks: ReadonlySet<string>, names: LinkNames): Promise<Record<string, unknown>> {
  const out = storedChanges(node, names, new Set());
  const changed = new Set([...Object.keys(out), fieldName]);
  if (node.meta.recName && changed.has(node.meta.recName)) addDisplayName(node, out);
  for (const field of node.meta.fields.values()) {
    if (!field.isComputed || field.isStored || !field.options.calculate || field.options.internal) continue;
    if (!(field.options.depends ?? []).some((dep) => changed.has(dep.split('.')[0]!))) continue;
    // Read as the caller, as a fetch computes it.
    const value = await (node.record as unknown as Record<string, () => unknown>)[field.options.calculate]!();
    out[field.name] = computedValue(field, value, names);
  }
  for (const name of effectLinks) {
    const field = node.meta.fields.get(name);
    if (!(field instanceof ManyToManyField)) continue;
    const records = (await node.record._batch.relation(field, node.record)) as Model[];
    names.want(field.target, records.map((r) => r.id));
    out[name] = records.map((r) => new LinkValue(field.target, r.id, true));
  }
  for (const [name, lines] of node.lines) {
    const inverse = new Set([lines.field.inverse.name]);
    const changes = lines.nodes.map((line) => storedChanges(line, names, inverse));
    if (!changes.some((c) => Object.keys(c).length)) continue;
    out[name] = lines.sent.map((sent, i) => {
      const c = changes[i]!;
      if (!Object.keys(c).length) return sent;
      return { ...(typeof sent === 'object' && sent !== null ? sent : { id: sent }), ...c };
    });
  }
  addParents(node, out, names);
  return out;
}

/** The stored values of `node` that differ from what the form holds, but those of `skip`. */
function storedChanges(node: DraftNode, names: LinkNames, skip: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of node.meta.fields.values()) {
    if (!field.column || field.options.internal || field.name === 'id' || skip.has(field.name)) continue;
    const value = node.record._values[field.name];
    if (sameStored(node.baseline[field.name], value)) continue;
    out[field.name] = storedValue(field, value, names);
  }
  return out;
}

/** The records `node` belongs to whose values changed, nested under the link to each (and so on upwards). */
function addParents(node: DraftNode, out: Record<string, unknown>, names: LinkNames): void {
  for (const [name, parent] of node.parents) {
    if (!parent) continue;
    const values = storedChanges(parent, names, new Set());
    if (parent.meta.recName && parent.meta.recName in values) addDisplayName(parent, values);
    addParents(parent, values, names);
    if (!Object.keys(values).length) continue;
    const link = out[name];
    out[name] = new LinkValue(parent.meta, parent.record.id, link instanceof LinkValue, values);
  }
}

function addDisplayName(node: DraftNode, out: Record<string, unknown>): void {
  const rec = node.record._values[node.meta.recName!];
  const unnamed = rec === null || rec === undefined || rec === '';
  // A new record has no number to name it by until it is saved.
  out.display_name = unnamed && node.isNew ? null : displayName(node.meta, node.record._values);
}

function storedValue(field: Field, value: unknown, names: LinkNames): unknown {
  if (field instanceof ManyToOneField) {
    if (typeof value !== 'number') return null;
    names.want(field.target, [value]);
    return new LinkValue(field.target, value, true);
  }
  return field.fromColumn(value);
}

/** A non-stored computed value as a fetch shows it. */
function computedValue(field: Field, value: unknown, names: LinkNames): unknown {
  if (field instanceof ManyToOneField) {
    const id = value !== null && typeof value === 'object' ? (value as { id?: unknown }).id : value;
    return storedValue(field, typeof id === 'number' ? id : null, names);
  }
  if (field.isRelational) return undefined; // to-many computed values are read with a fetch
  try {
    return field.fromColumn(asLoaded(field, field.toColumn(value ?? null)));
  } catch {
    return value ?? null;
  }
}

function resolve(value: unknown, names: LinkNames): unknown {
  if (value instanceof LinkValue) {
    const link = value.named ? names.link(value.target, value.id) : { id: value.id };
    return { ...link, ...(resolve(value.extra, names) as Record<string, unknown>) };
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, names));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, names)]));
  }
  return value;
}
