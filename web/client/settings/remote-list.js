/**
 * A list a settings screen shows, fetched from one route: what it holds, whether it is loading,
 * the failure to show in its place, and `reload` after a change. A reload keeps the rows on screen
 * until the new ones arrive (no flash of "Loading…" after each revoke).
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';

/**
 * @template T
 * @param {string} path
 * @returns {{items: T[] | null, error: string | null, loading: boolean, reload: () => Promise<void>}}
 */
export function useRemoteList(path) {
  const [items, setItems] = useState(/** @type {T[] | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [loading, setLoading] = useState(true);

  const reload = useCallback(async () => {
    setLoading(true);
    try {
      const answer = await api.get(path, {});
      setItems(Array.isArray(answer) ? answer : []);
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setLoading(false);
    }
  }, [path]);

  useEffect(() => { void reload(); }, [reload]);
  return { items, error, loading, reload };
}
