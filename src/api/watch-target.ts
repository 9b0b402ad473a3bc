/**
 * Whether the caller may watch a record for changes (spec §6.3): exactly when it may read it —
 * rights, record rules and company isolation as for `/api/fetch` — so a watch reveals nothing a
 * read would not. A record the caller cannot see is as absent as a missing one (`NotFound`).
 */
import { currentEnv } from '../orm/env.js';
import { fetchRecord } from './record-reads.js';

export async function assertWatchable(model: string, id: number): Promise<void> {
  await fetchRecord(currentEnv().registry.meta(model), id, ['id']);
}
