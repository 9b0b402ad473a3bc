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
import { assertRecordsAllowed } from '../../access/record-checks.js';
import { prepareFileDelete } from './file-values.js';
import { assertUnlocked, hasStateLocks } from '../state-locks.js';

export async function deleteRecords(meta: ModelMeta, ids: readonly number[]): Promise<void> {
  if (!ids.length) return;
  await assertRecordsAllowed(meta, 'delete', ids);
  if (hasStateLocks(meta)) await assertUnlocked(meta, { op: 'delete', ids });
  await meta.cls._check_change?.({ op: 'delete', ids });
  // Attachments release their bytes; File-field owners take their attachments with them.
  const files = await prepareFileDelete(meta, ids);
  const pending = newPending();
  await collectDependents(meta, ids, triggeredFieldNames(meta), pending);
  pending.get(meta)?.forEach((set) => ids.forEach((id) => set.delete(id)));
  const deleted = await runGuarded<{ id: number }>((guard) => sql`DELETE FROM ${sql.table(meta.table)}
    WHERE id = ANY(${[...ids]}) RETURNING id${guard ? sql`, ${guard}` : sql``}`);
  if (deleted.length !== new Set(ids).size) {
    const found = new Set(deleted.map((r) => r.id));
    throw new NotFound(`${meta.name} ${ids.filter((id) => !found.has(id)).slice(0, 5).join(', ')} does not exist`);
  }
  if (files) await files.finish();
  await flushRecompute(pending);
}
