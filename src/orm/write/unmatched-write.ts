/**
 * A write of values that reaches no record — a bulk update whose selection matches nothing, or
 * `{ids: []}` — still checks its values, so bad input gets the same 400 whether 0 or N records
 * match: each value converted by its field (type, `max_length`, choices), required fields not
 * emptied, companies the caller may not assign refused, and every link (a ManyToOne or File id,
 * ManyToMany ids, the lines of a OneToMany and their own values and links, recursively) naming a
 * record the caller can read, refused exactly as the write of a record would refuse it. Uploads are
 * checked but not stored.
 *
 * What is about the records themselves does not run, as there are none: `_check_change`, state
 * locks, record rules, setters of computed fields, company consistency between a record and its
 * links. No statement at all unless a link is given; then one, for every link of the call.
 */
import { sql } from '../../db/sql-fragment.js';
import { NotFound } from '../../errors.js';
import { activePolicy } from '../access-policy.js';
import { missingReference } from '../missing-reference.js';
import type { Field } from '../fields/field.js';
import { FileField, ManyToOneField, isRecordId } from '../fields/relational-fields.js';
import { AUDIT_FIELDS } from '../generic-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { runSelect } from '../execute-sql.js';
import { inCondition } from '../query/filter-ast.js';
import { EMPTY_STATE, planSelect } from '../query/select-plan.js';
import { checkedWithoutUploads } from './file-values.js';
import { checkRequired, lineIdError, sortValues, type WriteMode } from './write-values.js';

/** Ids the values name in one target model, and whose refusal each is. */
interface NamedIds {
  readonly target: ModelMeta;
  readonly ids: readonly number[];
  /** The link field (refused as a missing reference), or null for OneToMany line ids (a 404, as a write of them says). */
  readonly field: Field | null;
}

/** Checks `vals` as a write of them to records of `meta` would (see the file comment). */
export async function checkUnmatchedWrite(meta: ModelMeta, vals: Record<string, unknown>, parentLink?: Field): Promise<void> {
  const named: NamedIds[] = [];
  checkValues(meta, vals, 'update', parentLink, named);
  await assertReadable(named);
}

function checkValues(meta: ModelMeta, vals: Record<string, unknown>, mode: WriteMode, parentLink: Field | undefined, named: NamedIds[]): void {
  const sorted = sortValues(meta, checkedWithoutUploads(meta, vals), mode);
  checkRequired(meta, sorted.columns, mode, mode === 'create' ? requiredWithoutDefault(meta, parentLink) : undefined);
  activePolicy()?.assertCompanyValues(meta, sorted);
  for (const [field, value] of sorted.columns) {
    if (field === parentLink || (AUDIT_FIELDS as readonly string[]).includes(field.name) || typeof value !== 'number') continue;
    const target = linkTarget(field);
    if (target) named.push({ target, ids: [value], field });
  }
  for (const [field, ids] of sorted.manyToMany) named.push({ target: field.target, ids, field });
  for (const [field, lines] of sorted.oneToMany) {
    // The link to the parent is the write path's own (there is no parent here): never the caller's.
    const inverse = field.inverseName;
    const lineIds: number[] = [];
    for (const line of lines) {
      if (isRecordId(line)) {
        lineIds.push(line);
        continue;
      }
      if (!line || typeof line !== 'object' || Array.isArray(line)) throw lineIdError(field, line);
      const { id, [inverse]: _parent, ...own } = line as Record<string, unknown>;
      if (id === undefined || id === null) checkValues(field.target, own, 'create', field.inverse, named);
      else if (isRecordId(id)) {
        lineIds.push(id);
        checkValues(field.target, own, 'update', field.inverse, named);
      } else throw lineIdError(field, id);
    }
    if (lineIds.length) named.push({ target: field.target, ids: lineIds, field: null });
  }
}

/** The fields a create must be given: required, stored, not computed, without a default (none is computed here). */
function requiredWithoutDefault(meta: ModelMeta, parentLink: Field | undefined): Field[] {
  return [...meta.fields.values()].filter((f) => f.isRequired && f.column && !f.isComputed && f.options.default === undefined && f !== parentLink);
}

/** The model a link field points to (a File field: the attachment). */
function linkTarget(field: Field): ModelMeta | null {
  if (field instanceof ManyToOneField) return field.target;
  if (field instanceof FileField) return field.model.registry.has('Attachment') ? field.model.registry.meta('Attachment') : null;
  return null;
}

/**
 * Throws the refusal of the first named id the caller cannot read (archived records are readable;
 * a target model it may not read at all is a 403): one statement, an array of the readable ids per
 * target model, each read through the query path as the caller.
 */
async function assertReadable(named: readonly NamedIds[]): Promise<void> {
  const byTarget = new Map<ModelMeta, Set<number>>();
  for (const { target, ids } of named) {
    const set = byTarget.get(target) ?? byTarget.set(target, new Set()).get(target)!;
    for (const id of ids) set.add(id);
  }
  if (!byTarget.size) return;
  const targets = [...byTarget.keys()];
  const columns = targets.map((target, i) => {
    // As `query().with_archived()` reads them (no archivable default).
    const { scope, where } = planSelect(target, { ...EMPTY_STATE, activeTest: false, filters: [inCondition(['id'], [...byTarget.get(target)!])] });
    return sql`ARRAY(SELECT ${sql.id(scope.alias, 'id')} FROM ${scope.from()} WHERE ${where}) AS ${sql.id(`t${i}`)}`;
  });
  const [row] = await runSelect<Record<string, number[]>>(sql.join(columns), sql``);
  const readable = new Map(targets.map((target, i) => [target, new Set(row![`t${i}`])]));
  for (const { target, ids, field } of named) {
    const missing = ids.filter((id) => !readable.get(target)!.has(id));
    if (!missing.length) continue;
    throw field ? missingReference(field, target.name, missing) : new NotFound(`${target.name} ${missing.slice(0, 5).join(', ')} does not exist`);
  }
}
