/**
 * The currencies of a list's amount sums (the footer's, and each group row's). A sum covers every
 * matching record, not only the page, so the page's rows cannot tell whether they share one
 * currency: the server is asked for the sums grouped by each amount's currency field (one grouped
 * query per currency field; grouped lists ask once more, by group and currency). One currency:
 * the sum carries its symbol, like the rows. Several: one sum per currency — adding euros to
 * dollars would be a figure of nothing.
 */
import { api } from '../../api.js';

/**
 * @typedef {import('./list-columns.js').Column} Column
 * @typedef {{name: string, symbol: string | null, position: 'Before' | 'After' | null, rounding: number | null}} CurrencyFormat
 * @typedef {{currency: CurrencyFormat | null, sum: number}} CurrencySum
 * @typedef {{filter_str?: unknown, name_search?: unknown}} ListMatch the list's query (its filter and search)
 * @typedef {{[key: string]: any, aggregates: Record<string, number | null>}} SumRow
 */

/** Pairs of (group, currency) asked at most; past that, group rows show the figure alone. */
const GROUP_PAIRS_MAX = 2000;

/**
 * Per summed Monetary column, its sums by currency over every match (largest first); columns
 * without a currency field are left out.
 * @param {string} model @param {Column[]} columns @param {ListMatch} match @param {AbortSignal} [signal]
 * @returns {Promise<Record<string, CurrencySum[]>>}
 */
export async function footerCurrencies(model, columns, match, signal) {
  const byField = await sumRows(model, columns, match, null, 100, signal);
  /** @type {Record<string, CurrencySum[]>} */
  const sums = {};
  for (const { currencyField, names, rows } of byField.parts) {
    for (const name of names) sums[name] = currencySums(rows, currencyField, name, byField.currencies);
  }
  return sums;
}

/**
 * The same per group row of a list grouped by `groupField`, keyed by `keyOf(group value)`; empty
 * when the list has more (group, currency) pairs than are asked at once.
 * @param {string} model @param {Column[]} columns @param {ListMatch} match @param {string} groupField
 * @param {(value: unknown) => string} keyOf @param {AbortSignal} [signal]
 * @returns {Promise<Map<string, Record<string, CurrencySum[]>>>}
 */
export async function groupCurrencies(model, columns, match, groupField, keyOf, signal) {
  const byField = await sumRows(model, columns, match, groupField, GROUP_PAIRS_MAX, signal);
  /** @type {Map<string, Record<string, CurrencySum[]>>} */
  const groups = new Map();
  if (byField.parts.some((p) => p.rows.length >= GROUP_PAIRS_MAX)) return groups;
  for (const { currencyField, names, rows } of byField.parts) {
    /** @type {Map<string, SumRow[]>} */
    const rowsByGroup = new Map();
    for (const row of rows) {
      const key = keyOf(row[groupField]);
      rowsByGroup.set(key, [...(rowsByGroup.get(key) ?? []), row]);
    }
    for (const [key, groupRows] of rowsByGroup) {
      const sums = groups.get(key) ?? {};
      for (const name of names) sums[name] = currencySums(groupRows, currencyField, name, byField.currencies);
      groups.set(key, sums);
    }
  }
  return groups;
}

/**
 * The sums of the summed Monetary columns grouped by their currency field (and `groupField`
 * first, when given), with the currencies met.
 * @param {string} model @param {Column[]} columns @param {ListMatch} match @param {string | null} groupField
 * @param {number} limit @param {AbortSignal} [signal]
 */
async function sumRows(model, columns, match, groupField, limit, signal) {
  /** @type {Map<string, string[]>} columns by currency field */
  const byCurrencyField = new Map();
  for (const c of columns) {
    const currencyField = c.summable && c.field.type === 'Monetary' ? c.field.currency_field : undefined;
    if (currencyField) byCurrencyField.set(currencyField, [...(byCurrencyField.get(currencyField) ?? []), c.name]);
  }
  const scope = {
    ...(match.filter_str ? { filter_str: match.filter_str } : {}),
    ...(match.name_search ? { name_search: match.name_search } : {}),
  };
  const parts = await Promise.all([...byCurrencyField].map(async ([currencyField, names]) => {
    const group_fields = groupField ? [groupField, currencyField] : [currencyField];
    // With `footer_aggregates` the groups come as `data` (with their count and the overall sums).
    const answer = /** @type {{data: SumRow[]}} */ (await api.query(model, { ...scope, group_fields, footer_aggregates: names, limit }, { signal }));
    return { currencyField, names, rows: answer.data };
  }));
  const ids = [...new Set(parts.flatMap((p) => p.rows.map((row) => row[p.currencyField]?.id).filter((id) => typeof id === 'number')))];
  const currencies = ids.length ? await currencyFormats(ids, signal) : new Map();
  return { parts, currencies };
}

/**
 * One column's sums by currency, largest first.
 * @param {SumRow[]} rows @param {string} currencyField @param {string} name @param {Map<number, CurrencyFormat>} currencies
 * @returns {CurrencySum[]}
 */
function currencySums(rows, currencyField, name, currencies) {
  return rows
    .filter((row) => typeof row.aggregates?.[name] === 'number')
    .map((row) => ({ currency: currencies.get(row[currencyField]?.id) ?? null, sum: /** @type {number} */ (row.aggregates[name]) }))
    .sort((a, b) => Math.abs(b.sum) - Math.abs(a.sum));
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
