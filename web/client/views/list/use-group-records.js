/**
 * The records of a grouped list's opened groups: each group loads its first page when opened and
 * one more page per "Load more", never everything at once. Opened groups stay open across reloads
 * (their first page is read again); a new query (other filter, other grouping) closes them.
 */
import { useRef, useState } from 'preact/hooks';
import { api } from '../../api.js';

/**
 * @typedef {import('./list-row.js').ListRecord} ListRecord
 * @typedef {{expanded: boolean, records: ListRecord[], page: number, loading: boolean, error: string | null}} GroupRecords
 */

/**
 * @param {string} model
 * @param {(condition: string, page: number) => Record<string, unknown>} queryFor the query body of one page of a group
 */
export function useGroupRecords(model, queryFor) {
  const [groups, setGroups] = useState(/** @type {Map<string, GroupRecords>} */ (new Map()));
  /** Which answer each group waits for: a later request wins. */
  const tokens = useRef(/** @type {Map<string, number>} */ (new Map()));
  const queryRef = useRef(queryFor);
  queryRef.current = queryFor;

  /** @param {string} key @param {(g: GroupRecords) => GroupRecords} change */
  const patch = (key, change) =>
    setGroups((current) => {
      const next = new Map(current);
      next.set(key, change(current.get(key) ?? { expanded: false, records: [], page: 0, loading: false, error: null }));
      return next;
    });

  /** @param {string} key @param {string} condition @param {number} page */
  const load = async (key, condition, page) => {
    const token = (tokens.current.get(key) ?? 0) + 1;
    tokens.current.set(key, token);
    patch(key, (g) => ({ ...g, expanded: true, loading: true, error: null }));
    try {
      const rows = /** @type {ListRecord[]} */ (await api.query(model, queryRef.current(condition, page)));
      if (tokens.current.get(key) !== token) return;
      patch(key, (g) => ({ ...g, records: page === 1 ? rows : [...g.records, ...rows], page, loading: false }));
    } catch (error) {
      if (tokens.current.get(key) !== token) return;
      const detail = error && typeof error === 'object' && 'detail' in error ? String(error.detail) : String(error);
      patch(key, (g) => ({ ...g, loading: false, error: detail }));
    }
  };

  return {
    groups,
    /** @param {string} key @param {string} condition */
    toggle(key, condition) {
      const current = groups.get(key);
      if (current?.expanded) patch(key, (g) => ({ ...g, expanded: false }));
      else if (current && current.page > 0) patch(key, (g) => ({ ...g, expanded: true }));
      else void load(key, condition, 1);
    },
    /** @param {string} key @param {string} condition */
    more(key, condition) {
      void load(key, condition, (groups.get(key)?.page ?? 0) + 1);
    },
    /** Reads the opened groups' first page again (after a change). @param {(key: string) => string | null} conditionOf */
    refresh(conditionOf) {
      for (const [key, g] of groups) {
        const condition = conditionOf(key);
        if (g.expanded && condition !== null) void load(key, condition, 1);
        else if (!g.expanded) patch(key, (old) => ({ ...old, records: [], page: 0 }));
      }
    },
    reset() {
      tokens.current.clear();
      setGroups(new Map());
    },
  };
}
