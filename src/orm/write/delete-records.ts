/**
 * Deletes records. Stored computed fields that depended on them (a deleted line's order total)
 * are found before the delete and recomputed after it. Foreign keys apply the declared
 * on_delete; a RESTRICT violation becomes a `ValidationError` naming the referencing model.
 */
import { sql } from '../../db/sql-fragment.js';
import { NotFound } from '../../errors.js';
import type { ModelMeta } from '../model-meta.js';
import { runGuarded } from '../execute-sql.js';
import { collectDependents, flushRecompute, newPending, triggeredFieldNames } from './recompute.js';
import { activePolicy } from '../access-policy.js';
import { prepareFileDelete } from './file-values.js';
import { LOCKED, lockedIds, ownerLock } from './row-locks.js';
import { assertUnlocked, hasStateLocks } from '../state-locks.js';

export async function deleteRecords(meta: ModelMeta, ids: readonly number[]): Promise<void> {
  if (!ids.length) return;
  await activePolicy()?.assertRecordsAllowed(meta, 'delete', ids);
  if (hasStateLocks(meta)) await assertUnlocked(meta, { op: 'delete', ids });
  await meta.cls._check_change?.({ op: 'delete', ids });
  // Attachments release their bytes; File-field owners take their attachments with them.
  const files = await prepareFileDelete(meta, ids);
  const pending = newPending();
  const triggered = triggeredFieldNames(meta);
  await collectDependents(meta, ids, triggered, pending);
  pending.get(meta)?.forEach((set) => ids.forEach((id) => set.delete(id)));
  // Rows are locked in id order, the owners whose totals the delete recomputes first (`row-locks.ts`);
  // one row has one lock to take and keeps the plain statement.
  const owners = ownerLock(meta, ids, triggered, []);
  const rows = ids.length > 1
    ? sql`USING ${lockedIds(meta, ids, 'UPDATE', owners?.gate)} WHERE ${sql.id(meta.table, 'id')} = ${sql.ref(`${LOCKED}.id`)}`
    : sql`WHERE id = ANY(${[...ids]})${owners ? sql` AND ${owners.gate}` : sql``}`;
  const deleted = await runGuarded<{ id: number }>((guard) => sql`${owners?.with ?? sql``}DELETE FROM ${sql.table(meta.table)}
    ${rows} RETURNING ${sql.id(meta.table, 'id')}${guard ? sql`, ${guard}` : sql``}`);
  if (deleted.length !== new Set(ids).size) {
    const found = new Set(deleted.map((r) => r.id));
    throw new NotFound(`${meta.name} ${ids.filter((id) => !found.has(id)).slice(0, 5).join(', ')} does not exist`);
  }
  if (files) await files.finish();
  await flushRecompute(pending);
}
