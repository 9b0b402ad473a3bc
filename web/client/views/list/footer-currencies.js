/**
 * The currencies of the footer's amount sums. The footer sums every matching record, not only
 * the page, so the page's rows cannot tell whether they share one currency: the server is asked
 * for the sums grouped by each amount's currency field (one grouped query per currency field).
 * One currency: the sum carries its symbol, like the rows. Several: one sum per currency —
 * adding euros to dollars would be a figure of nothing.
 */
import { api } from '../../api.js';

/**
 * @typedef {import('./list-columns.js').Column} Column
 * @typedef {{name: string, symbol: string | null, position: 'Before' | 'After' | null, rounding: number | null}} CurrencyFormat
 * @typedef {{currency: CurrencyFormat | null, sum: number}} CurrencySum
 */

/**
 * Per summed Monetary column, its sums by currency (largest first); columns without a currency field are left out.
 * @param {string} model @param {Column[]} columns @param {{filter_str?: unknown, name_search?: unknown}} match the list's query
 * @param {AbortSignal} [signal]
 * @returns {Promise<Record<string, CurrencySum[]>>}
 */
export async function footerCurrencies(model, columns, match, signal) {
  /** @type {Map<string, string[]>} columns by currency field */
  const byCurrencyField = new Map();
  for (const c of columns) {
    const currencyField = c.summable && c.field.type === 'Monetary' ? c.field.currency_field : undefined;
    if (currencyField) byCurrencyField.set(currencyField, [...(byCurrencyField.get(currencyField) ?? []), c.name]);
  }
  if (!byCurrencyField.size) return {};
  const scope = {
    ...(match.filter_str ? { filter_str: match.filter_str } : {}),
    ...(match.name_search ? { name_search: match.name_search } : {}),
  };
  const grouped = await Promise.all([...byCurrencyField].map(async ([currencyField, names]) => {
    // With `footer_aggregates` the groups come as `data` (with their count and the overall sums).
    const answer = /** @type {{data: {[key: string]: any, aggregates: Record<string, number | null>}[]}} */ (
      await api.query(model, { ...scope, group_fields: [currencyField], footer_aggregates: names, limit: 100 }, { signal }));
    return { currencyField, names, groups: answer.data };
  }));
  const ids = [...new Set(grouped.flatMap((g) => g.groups.map((row) => row[g.currencyField]?.id).filter((id) => typeof id === 'number')))];
  const currencies = ids.length ? await currencyFormats(ids, signal) : new Map();
  /** @type {Record<string, CurrencySum[]>} */
  const sums = {};
  for (const { currencyField, names, groups } of grouped) {
    for (const name of names) {
      sums[name] = groups
        .filter((row) => typeof row.aggregates?.[name] === 'number')
        .map((row) => ({ currency: currencies.get(row[currencyField]?.id) ?? null, sum: /** @type {number} */ (row.aggregates[name]) }))
        .sort((a, b) => Math.abs(b.sum) - Math.abs(a.sum));
    }
  }
  return sums;
}

/** @param {number[]} ids @param {AbortSignal} [signal] @returns {Promise<Map<number, CurrencyFormat>>} */
async function currencyFormats(ids, signal) {
  // A filter naming `active` reads archived currencies too (an old order keeps its currency).
  const rows = /** @type {{id: number, name: string, symbol: string | null, position: 'Before' | 'After' | null, rounding: number | null}[]} */ (
    await api.query('Currency', {
      filter_str: `Q(id__in=${JSON.stringify(ids)}) & (Q(active=True) | Q(active=False))`,
      fields: ['name', 'symbol', 'position', 'rounding'], limit: ids.length,
    }, { signal }));
  return new Map(rows.map((r) => [r.id, { name: r.name, symbol: r.symbol, position: r.position, rounding: r.rounding }]));
}
