/**
 * Which field of the form a server refusal (a 400) is about: the body's `field` when the server
 * names it, else the field quoted in the message (`Field 'name' of Task is required`,
 * `Sales Order: 'name' must be unique`) when the message is about this model — a refusal of a
 * line's field (`of Sales Order Line`) is not the order's field of the same name.
 */

/** @param {string} text */
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * @param {unknown} error an ApiError (or anything thrown)
 * @param {{model: string, label?: string, names: string[]}} form
 * @returns {string | null}
 */
export function refusedField(error, form) {
  const err = /** @type {{status?: number, detail?: string, body?: Record<string, unknown>}} */ (error ?? {});
  if (err.status !== 400) return null;
  const named = err.body?.field;
  if (typeof named === 'string' && form.names.includes(named)) return named;
  const detail = String(err.detail ?? '').replace(/^item \d+: /, '');
  const quoted = /[Ff]ield '([\w]+)'|'([\w]+)' must be unique|^[\w ]+: '([\w]+)'/.exec(detail);
  const field = quoted ? quoted[1] ?? quoted[2] ?? quoted[3] : null;
  if (!field || !form.names.includes(field)) return null;
  const owners = [form.model, form.label].filter(Boolean).map((n) => escape(String(n))).join('|');
  const ours = new RegExp(`(?:of |^)(?:${owners})(?: is\\b|:|$)`);
  const someModel = /(?:of |^)[A-Z][\w ]*?(?: is\b|:)/;
  // A message naming a model names ours; one naming none (`Field 'product': Product 9 does not exist`) is ours too.
  return ours.test(detail) || !someModel.test(detail.replace(/^[Ff]ield '\w+'/, '')) ? field : null;
}
