/**
 * The groups of a grouped page as the table draws them: each group's label in the reader's
 * language, counts and sums, and what of its records has been opened and read
 * (`use-group-records.js`).
 */
import { useMemo } from 'preact/hooks';
import { formatValue } from '../../format.js';

/**
 * @param {import('./use-list-page.js').PageData['groups']} groups
 * @param {Map<string, import('./use-group-records.js').GroupRecords>} loadedGroups
 * @param {import('../../format.js').FieldInfo | null} groupField the registry entry grouped on, with its name
 * @param {string} lang
 * @returns {import('./list-table.js').GroupView[] | null}
 */
export function useGroupViews(groups, loadedGroups, groupField, lang) {
  return useMemo(
    () =>
      groups?.map((g) => {
        const loaded = loadedGroups.get(g.key);
        return /** @type {import('./list-table.js').GroupView} */ ({
          key: g.key,
          label: groupField ? formatValue(groupField, g.value, { lang }) || 'None' : String(g.value),
          count: g.count,
          aggregates: g.aggregates,
          currencySums: g.currencySums ?? {},
          expanded: Boolean(loaded?.expanded),
          records: loaded?.records ?? [],
          loading: Boolean(loaded?.loading),
          error: loaded?.error ?? null,
          hasMore: Boolean(loaded && loaded.records.length < g.count),
        });
      }) ?? null,
    [groups, loadedGroups, lang],
  );
}
