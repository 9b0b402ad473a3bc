/**
 * Which field of the form a server refusal (a 400) is about: the body's `field`, which the server
 * sends only when the refused field belongs to the model the request is about (a refusal of a
 * line's `name` inside an order's save is not the order's `name`). Data, never read from the text.
 */

/**
 * @param {unknown} error an ApiError (or anything thrown)
 * @param {{model: string, label?: string, names: string[]}} form
 * @returns {string | null}
 */
export function refusedField(error, form) {
  const err = /** @type {{status?: number, body?: Record<string, unknown>}} */ (error ?? {});
  if (err.status !== 400) return null;
  const named = err.body?.field;
  return typeof named === 'string' && form.names.includes(named) ? named : null;
}
