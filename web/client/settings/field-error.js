/**
 * Which input of a settings form a refusal is about, so the message is shown there: the field
 * the server names (`field` in the error body, data — never guessed from the text), else the
 * form's fallback. Anything but a 400 belongs to the form as a whole (a lost connection, a 403).
 */
import { ApiError } from '../api.js';

/**
 * @param {unknown} err
 * @param {readonly string[]} inputs the form's input names, as the API spells them
 * @param {string | null} [fallback] the input a 400 naming none is about, if any
 * @returns {{field: string | null, message: string}}
 */
export function refusalOf(err, inputs, fallback = null) {
  if (!(err instanceof ApiError)) return { field: null, message: err instanceof Error ? err.message : String(err) };
  if (err.status !== 400) return { field: null, message: err.detail };
  const named = err.field;
  if (named && inputs.includes(named)) return { field: named, message: err.detail };
  return { field: fallback, message: err.detail };
}
