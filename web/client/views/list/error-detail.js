/**
 * What a list says of a failure: the server's `detail` (an `ApiError` carries it), else the error as text.
 * @param {unknown} error
 */
export function errorDetail(error) {
  return error && typeof error === 'object' && 'detail' in error ? String(/** @type {{detail: unknown}} */ (error).detail) : String(error);
}
