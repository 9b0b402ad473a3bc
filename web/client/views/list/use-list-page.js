/**
 * The page a list shows: one `/api/query` for the records (or, grouped, the groups with their
 * counts and sums) of the current state, with the per-currency sums of amount columns in the
 * footer and per group. Read again whenever the state's query, the read paths or `reload()`
 * ask; an answer to an earlier question is dropped (aborted). Past the last page (records
 * deleted elsewhere) it asks for the last page there is (`onPastEnd`). The `ff:list-render`
 * performance measure records how long a page took to reach the screen once its data arrived.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api.js';
import { errorDetail } from './error-detail.js';
import { footerCurrencies, groupCurrencies } from './footer-currencies.js';
import { GROUP_PAGE_SIZE, PAGE_SIZE, pageQuery } from './list-query.js';

/**
 * @typedef {import('./list-row.js').ListRecord} ListRecord
 * @typedef {import('./footer-currencies.js').CurrencySum} CurrencySum
 * @typedef {{records: ListRecord[] | null, groups: {key: string, value: unknown, count: number, aggregates: Record<string, number | null>,
 *   currencySums?: Record<string, CurrencySum[]>}[] | null,
 *   total: number | null, aggregates: Record<string, number | null> | null, hasNext: boolean,
 *   currencySums?: Record<string, CurrencySum[]>}} PageData
 */

const NO_DATA = /** @type {PageData} */ ({ records: null, groups: null, total: null, aggregates: null, hasNext: false });

/**
 * @param {{
 *   model: string, state: import('./list-route.js').ListState, queryKey: string, grouped: boolean,
 *   registry: import('./list-columns.js').Registry, archivable: boolean, columns: import('./list-columns.js').Column[],
 *   fields: string[], defaultOrder: string[], onPastEnd: (page: number) => void,
 * }} options `state`: the effective one (no group when its field is gone); `queryKey`: its key
 */
export function useListPage({ model, state, queryKey, grouped, registry, archivable, columns, fields, defaultOrder, onPastEnd }) {
  const [data, setData] = useState(NO_DATA);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [reloads, setReloads] = useState(0);
  const rendered = useRef(false);

  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    const body = pageQuery({ state, registry, archivable, columns, fields, defaultOrder });
    const signal = controller.signal;
    const group = /** @type {string} */ (state.group);
    Promise.all([
      api.query(model, body, { signal }),
      footerCurrencies(model, columns, body, signal),
      grouped ? groupCurrencies(model, columns, body, group, groupKey, signal) : null,
    ])
      .then(([answer, currencySums, groupSums]) => {
        const { count, data: rows, aggregates } = /** @type {{count: number, data: any[], aggregates?: Record<string, number | null>}} */ (answer);
        if (!rows.length && count > 0 && state.page > 1) {
          onPastEnd(Math.max(1, Math.ceil(count / (grouped ? GROUP_PAGE_SIZE : PAGE_SIZE))));
          return;
        }
        performance.clearMarks('ff:list-data');
        performance.mark('ff:list-data');
        rendered.current = false;
        setData(
          grouped
            ? {
                records: null,
                groups: rows.map((g) => {
                  const key = groupKey(g[group]);
                  return { key, value: g[group], count: g.count, aggregates: g.aggregates ?? {}, currencySums: groupSums?.get(key) ?? {} };
                }),
                total: count,
                aggregates: aggregates ?? null,
                currencySums,
                hasNext: rows.length === GROUP_PAGE_SIZE,
              }
            : { records: rows, groups: null, total: count, aggregates: aggregates ?? null, currencySums, hasNext: state.page * PAGE_SIZE < count },
        );
        setError(null);
        setLoading(false);
      })
      .catch((err) => {
        if (controller.signal.aborted) return;
        setError(errorDetail(err));
        setLoading(false);
      });
    return () => controller.abort();
  }, [model, queryKey, reloads, fields.join(',')]);

  // How long the page took to reach the screen once its data arrived.
  useLayoutEffect(() => {
    if (rendered.current || (!data.records && !data.groups)) return;
    rendered.current = true;
    if (!performance.getEntriesByName('ff:list-data', 'mark').length) return;
    performance.clearMeasures('ff:list-render');
    performance.measure('ff:list-render', 'ff:list-data');
  }, [data]);

  return { data, setData, loading, error, reload: () => setReloads((n) => n + 1) };
}

/**
 * A group's key: its value, or the linked record's id.
 * @param {unknown} value
 */
function groupKey(value) {
  if (value && typeof value === 'object' && 'id' in value) return `id:${/** @type {{id: unknown}} */ (value).id}`;
  return JSON.stringify(value ?? null);
}
