/**
 * The values a form starts from: a read record as the form holds it (lines become `FormLine`s),
 * or a new record's defaults as the registry states them, and the currencies of its amounts read
 * with their symbols.
 */
import { api } from '../../api.js';
import { formLine } from './record-values.js';

/** @typedef {import('./form-shape.js').FormShape} FormShape */

/** A read record as the form holds it. @param {FormShape} shape @param {Record<string, any>} row */
export function formValues(shape, row) {
  /** @type {Record<string, any>} */
  const values = { ...row };
  for (const name of shape.names) {
    if (shape.fields[name].type === 'OneToMany') values[name] = (Array.isArray(row[name]) ? row[name] : []).map((line) => formLine(line, true));
  }
  return values;
}

/** Default values of a new record the registry states (the server adds computed ones through ui-effect). @param {FormShape} shape */
export function registryDefaults(shape) {
  /** @type {Record<string, any>} */
  const values = {};
  for (const name of shape.names) {
    const field = shape.fields[name];
    if (field.type === 'OneToMany') values[name] = [];
    else if (field.default !== undefined && (typeof field.default !== 'object' || field.default === null)) values[name] = field.default;
  }
  return values;
}

/**
 * A Monetary's currency read with its symbol, for links an effect answered by name only.
 * @param {FormShape} shape @param {Record<string, any>} values
 */
export async function withCurrencies(shape, values) {
  const next = { ...values };
  for (const name of shape.names) {
    const field = shape.fields[name];
    const link = field.type === 'Monetary' && field.currency_field ? next[field.currency_field] : null;
    if (!link || typeof link !== 'object' || link.symbol !== undefined || typeof link.id !== 'number') continue;
    try {
      const row = /** @type {Record<string, any>} */ (await api.fetchRecord('Currency', link.id, { fields: ['symbol', 'position', 'rounding', 'name'] }));
      next[/** @type {string} */ (field.currency_field)] = { ...link, ...row };
    } catch {
      // amounts stay without a symbol
    }
  }
  return next;
}
