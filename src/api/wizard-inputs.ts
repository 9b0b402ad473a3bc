/**
 * A wizard's inputs as its method receives them (CONTRACTS C1 "Wizards"). Before the method runs,
 * `inputs` is checked against the wizard's fields the way a write checks a record's values: each
 * value converted by its field (a wrong type, an unknown choice or an impossible date is a 400
 * naming the field), required inputs present, and relational ids naming records the caller can
 * read (refused exactly like missing ones). The method then receives one value per input, in the
 * form a record reads it back: ids as numbers (a ManyToMany as a list of ids), dates as
 * `YYYY-MM-DD`, date-times as ISO 8601 UTC, Monetary amounts as numbers. An input left out takes its
 * declared default (as a create would), else null (`[]` for a ManyToMany); keys that are no input
 * are ignored, as a write ignores unknown keys (spec §4.4).
 */
import { ValidationError } from '../errors.js';
import type { Field } from '../orm/fields/field.js';
import { showValue } from '../orm/fields/field.js';
import { ManyToManyField, ManyToOneField, isRecordId } from '../orm/fields/relational-fields.js';
import type { Wizard } from '../orm/wizards.js';
import { asLoaded } from '../orm/write/precompute.js';
import { assertReadableLinks, type GivenLink } from './readable-links.js';

export async function wizardInputs(wizard: Wizard, inputs: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  const links: GivenLink[] = [];
  for (const [name, field] of wizard.fields) {
    const given = Object.hasOwn(inputs, name) ? inputs[name] : await field.defaultValue();
    const value = inputValue(field, given);
    if (field.isRequired && isEmpty(value)) throw new ValidationError(`Field '${name}' of ${wizard.title} is required`, { field: name });
    if (field instanceof ManyToOneField && typeof value === 'number') links.push({ field, target: field.target, ids: [value] });
    if (field instanceof ManyToManyField) links.push({ field, target: field.target, ids: value as number[] });
    values[name] = value;
  }
  await assertReadableLinks(links);
  return values;
}

/** One input converted by its field into the value a record of that field would read back. */
export function inputValue(field: Field, value: unknown): unknown {
  if (value === undefined) value = null;
  if (field instanceof ManyToManyField) return idList(field, value);
  return field.fromColumn(asLoaded(field, field.toColumn(value)));
}

function isEmpty(value: unknown): boolean {
  return value === null || value === '' || (Array.isArray(value) && !value.length);
}

/** A ManyToMany input: ids, or `{id}` objects as a fetch gives them; duplicates collapse. */
function idList(field: ManyToManyField, value: unknown): number[] {
  if (value === null || value === false) return [];
  const refuse = (got: unknown) => new ValidationError(
    `Field '${field.name}' of ${field.model.name} takes a list of ${field.targetName} ids (integers from 1 to 2147483647); got ${showValue(got)}`, { field: field.name });
  if (!Array.isArray(value)) throw refuse(value);
  return [...new Set(value.map((v) => {
    const id = typeof v === 'object' && v !== null && 'id' in v ? (v as { id: unknown }).id : v;
    if (!isRecordId(id)) throw refuse(v);
    return id;
  }))];
}
