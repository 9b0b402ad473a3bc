/**
 * Writes the same values to records (a record's `write`, a queryset's `update`, the API's
 * update): one UPDATE for the columns, the relations, setters, then recomputation of the stored
 * computed fields that depend on what changed — including the records a changed link left.
 */
import { sql } from 'kysely';
import { NotFound } from '../../errors.js';
import { currentEnv } from '../env.js';
import type { Field } from '../fields/field.js';
import type { ModelMeta } from '../model-meta.js';
import { runGuarded } from '../execute-sql.js';
import { RecordBatch } from '../record-batch.js';
import { checkRequired, sortValues } from './write-values.js';
import { linkManyToMany, writeOneToMany } from './write-relations.js';
import { changesLinks, collectDependents, flushRecompute, newPending, protectedValues } from './recompute.js';
import { assertCompanyValues } from '../../access/record-access.js';
import { assertCompanyConsistency, touchesCompanyLinks } from '../../access/company-consistency.js';
import { linkCheck } from '../../access/reference-checks.js';
import { columnValue } from './monetary-rounding.js';
import { assertRecordsAllowed } from '../../access/record-checks.js';
import { prepareFileWrite } from './file-values.js';

export interface WriteOptions {
  /** The link to the parent a OneToMany write sets on its lines (set by the write path, not the caller). */
  readonly parentLink?: Field;
}

export async function writeRecords(
  meta: ModelMeta, ids: readonly number[], vals: Record<string, unknown>, options: WriteOptions = {},
): Promise<void> {
  if (!ids.length) return;
  const env = currentEnv();
  // The model's veto (`Model._check_change`) sees the values as given, before uploads become ids.
  const given = vals;
  // File fields: uploads become attachments, and replaced ones are deleted after the UPDATE.
  const files = await prepareFileWrite(meta, ids, vals);
  if (files) vals = files.vals;
  const sorted = sortValues(meta, vals, 'update');
  checkRequired(meta, sorted.columns, 'update');
  assertCompanyValues(meta, sorted);
  await assertRecordsAllowed(meta, 'write', ids);
  await meta.cls._check_change?.({ op: 'write', ids, vals: given });
  // Links to records the caller may not read are refused by the UPDATE's own RETURNING (no statement of its own).
  const links = linkCheck(meta, [sorted.columns], { except: options.parentLink, uploaded: files?.uploaded });
  const changed = [...sorted.columns.keys()].map((f) => f.name);
  const pending = newPending();
  // A changed link may leave dependents behind (a line moved to another order): collect them first.
  if (changesLinks(meta, changed)) await collectDependents(meta, ids, changed, pending);

  sorted.columns.set(meta.fields.get('updated_date')!, new Date().toISOString());
  sorted.columns.set(meta.fields.get('updated_by')!, env.uid);
  const sets = [...sorted.columns].map(([f, v]) => sql`${sql.id(f.column!)} = ${columnValue(meta, f, v, sorted.columns, true)}`);
  const updated = await runGuarded<{ id: number }>((guard) => sql`UPDATE ${sql.table(meta.table)} SET ${sql.join(sets)}
    WHERE id = ANY(${[...ids]}) RETURNING id${guard ? sql`, ${guard}` : sql``}${links?.returning ?? sql``}`);
  if (updated.length !== new Set(ids).size) {
    const found = new Set(updated.map((r) => r.id));
    throw new NotFound(`${meta.name} ${ids.filter((id) => !found.has(id)).slice(0, 5).join(', ')} does not exist`);
  }
  links?.verify(updated, [sorted.columns]);

  if (files) await files.finish();
  if (sorted.manyToMany.length) await linkManyToMany(meta, ids, ids.map(() => sorted.manyToMany), 'update');
  for (const [field, lines] of sorted.oneToMany) for (const id of ids) await writeOneToMany(field, id, lines, 'update');
  if (sorted.setters.length) {
    for (const rec of await RecordBatch.load(meta, ids)) {
      for (const [field, value] of sorted.setters) await (rec as any)[field.options.setter!](value);
    }
  }
  await collectDependents(meta, ids, changed, pending);
  // Values written to editable computed fields stay as written, whatever else this write changed.
  await flushRecompute(pending, protectedValues(sorted.columns.keys(), ids));
  const written = [...changed, ...sorted.manyToMany.map(([f]) => f.name)];
  if (touchesCompanyLinks(meta, written)) await assertCompanyConsistency(meta, ids);
}
