/**
 * A multipart POST (a file upload) with the session's CSRF header, failing as `api.js` fails: an
 * `ApiError` with the server's `detail`, never a raw body, a friendly sentence for a 500. `api.js`
 * sends JSON only, and the import preview takes the file as `multipart/form-data` (CONTRACTS C3).
 */
import { ApiError } from '../api.js';

/** @returns {string | null} */
function csrfToken() {
  for (const part of document.cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === 'ff_csrf') return decodeURIComponent(rest.join('='));
  }
  return null;
}

/**
 * @param {string} path
 * @param {FormData} form
 * @param {{signal?: AbortSignal}} [options]
 * @returns {Promise<any>} the JSON answer
 */
export async function postForm(path, form, options = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  const csrf = csrfToken();
  if (csrf) headers['X-CSRF-Token'] = csrf;
  let response;
  try {
    response = await fetch(path, { method: 'POST', headers, body: form, credentials: 'same-origin', signal: options.signal });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'The server cannot be reached. Check your connection and try again.', 'NetworkError', null);
  }
  if (response.ok) return response.json();
  const requestId = response.headers.get('x-request-id');
  /** @type {Record<string, unknown>} */
  let body = {};
  try {
    body = (await response.json()) ?? {};
  } catch {
    // not JSON: the status alone speaks
  }
  let detail = typeof body.detail === 'string' && body.detail ? body.detail : `The server answered ${response.status}.`;
  if (response.status >= 500 && response.status !== 503) {
    detail = `Something went wrong on the server.${requestId ? ` Quote request id ${requestId} when you report it.` : ''}`;
  }
  if (response.status === 401) location.assign(`/web/login?next=${encodeURIComponent(location.pathname + location.search + location.hash)}`);
  throw new ApiError(response.status, detail, typeof body.error === 'string' ? body.error : 'Error', requestId, body);
}
