/**
 * A record's state locks (`model-info`'s `state_locks`, the model's `_state_locks`): in the state
 * a lock's `when` filter matches (a confirmed order), its fields are read-only and its methods
 * are not offered. The server refuses both anyway; the form asks it which locks hold for the
 * record it shows (one small query per lock), so it never offers what would be refused.
 */
import { api } from '../../api.js';

/**
 * @typedef {{when: string, fields: string[], methods: string[]}} StateLock
 * @typedef {{fields: Set<string>, methods: Set<string>}} HeldLocks
 */

/** @type {HeldLocks} */
export const NO_LOCKS = { fields: new Set(), methods: new Set() };

/**
 * The locks holding for record `id` of `model`.
 * @param {string} model @param {number} id @param {StateLock[] | undefined} locks @param {boolean} archivable
 * @returns {Promise<HeldLocks>}
 */
export async function heldLocks(model, id, locks, archivable) {
  if (!locks?.length) return NO_LOCKS;
  // A filter naming `active` reaches archived records too (the form shows those as well).
  const scope = `Q(id=${id})${archivable ? ' & (Q(active=True) | Q(active=False))' : ''}`;
  const held = await Promise.all(locks.map(async (lock) => {
    const rows = await api.query(model, { filter_str: `${scope} & (${lock.when})`, fields: ['id'], limit: 1 });
    return Array.isArray(rows) && rows.length ? lock : null;
  }));
  const holding = held.filter((l) => l !== null);
  if (!holding.length) return NO_LOCKS;
  return {
    fields: new Set(holding.flatMap((l) => /** @type {StateLock} */ (l).fields)),
    methods: new Set(holding.flatMap((l) => /** @type {StateLock} */ (l).methods)),
  };
}
