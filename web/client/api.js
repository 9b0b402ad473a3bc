/**
 * The web client's one way to the server. Every call goes to this origin with the session
 * cookies; every change carries the CSRF header (the `ff_csrf` cookie's value in `X-CSRF-Token`,
 * as the server asks of cookie sessions). A failure is an `ApiError` holding the server's
 * `{detail, error}` and the request id, never a raw body: a 500 shows the user a friendly sentence
 * with the id to quote, not the server's internals. A 401 means the session is gone: the client
 * goes to the sign-in page and comes back to where it was.
 */

const CSRF_COOKIE = 'ff_csrf';
const CSRF_HEADER = 'X-CSRF-Token';

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} detail what the user is shown
   * @param {string} error the server's error name (`ValidationError`, `AccessError`, …)
   * @param {string | null} requestId the answer's `X-Request-Id`
   * @param {Record<string, unknown>} body the whole error body (e.g. `field` when the server names one)
   */
  constructor(status, detail, error, requestId, body = {}) {
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
    this.error = error;
    this.requestId = requestId;
    this.body = body;
  }

  /** The field a 400 is about, when the server names one (`field`, or `'name'` quoted in the detail). */
  get field() {
    const named = this.body.field;
    if (typeof named === 'string') return named;
    return null;
  }
}

/** @returns {string | null} */
function csrfToken() {
  for (const part of document.cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === CSRF_COOKIE) return decodeURIComponent(rest.join('='));
  }
  return null;
}

/** Called on a 401; the shell replaces it (sign-in redirect). @type {(error: ApiError) => void} */
let onUnauthorized = () => {
  const next = location.pathname + location.search + location.hash;
  location.assign(`/web/login?next=${encodeURIComponent(next)}`);
};

/** @param {(error: ApiError) => void} handler */
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

/**
 * @typedef {object} RequestOptions
 * @property {boolean} [raw] answer the `Response` itself (documents, files) instead of parsed JSON
 * @property {boolean} [quiet401] do not leave the page on a 401 (the sign-in page itself)
 * @property {AbortSignal} [signal]
 * @property {Record<string, string>} [headers]
 */

/**
 * One request. JSON in, JSON out (or the `Response` with `raw`); throws `ApiError`.
 * @param {'GET' | 'POST' | 'PUT' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {RequestOptions} [options]
 */
export async function request(method, path, body, options = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', ...options.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') {
    const csrf = csrfToken();
    if (csrf) headers[CSRF_HEADER] = csrf;
  }
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal: options.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'The server cannot be reached. Check your connection and try again.', 'NetworkError', null);
  }
  if (!response.ok) throw await errorOf(response, options);
  if (options.raw) return response;
  if (response.status === 204) return null;
  const type = response.headers.get('content-type') ?? '';
  return type.includes('json') ? response.json() : response;
}

/**
 * @param {Response} response
 * @param {RequestOptions} options
 */
async function errorOf(response, options) {
  const requestId = response.headers.get('x-request-id');
  /** @type {Record<string, unknown>} */
  let body = {};
  try {
    const parsed = await response.json();
    if (parsed && typeof parsed === 'object') body = parsed;
  } catch {
    // not JSON (a proxy's page): the status alone speaks
  }
  const error = typeof body.error === 'string' ? body.error : 'Error';
  let detail = typeof body.detail === 'string' && body.detail ? body.detail : typeof body.message === 'string' ? body.message : '';
  if (response.status >= 500 && response.status !== 503) {
    // Never the server's internals: a sentence and the id an administrator finds in the log.
    detail = `Something went wrong on the server.${requestId ? ` Quote request id ${requestId} when you report it.` : ''}`;
  } else if (response.status === 503 && !detail) {
    detail = 'The service is briefly unavailable. Try again in a few seconds.';
  } else if (!detail) {
    detail = `The server answered ${response.status}.`;
  }
  const failure = new ApiError(response.status, detail, error, requestId, body);
  if (response.status === 401 && !options.quiet401) onUnauthorized(failure);
  return failure;
}

/** Path segment for a model or method name. @param {string} name */
const seg = (name) => encodeURIComponent(name);

/** The generic model API (spec §4), one function per route. */
export const api = {
  request,
  /** @param {string} path @param {RequestOptions} [options] */
  get: (path, options = {}) => request('GET', path, undefined, options),
  /** @param {string} path @param {unknown} [body] @param {RequestOptions} [options] */
  post: (path, body, options = {}) => request('POST', path, body ?? {}, options),
  /** @param {string} path @param {unknown} [body] @param {RequestOptions} [options] */
  put: (path, body, options = {}) => request('PUT', path, body ?? {}, options),
  /** @param {string} path @param {unknown} [body] @param {RequestOptions} [options] */
  del: (path, body, options = {}) => request('DELETE', path, body, options),

  /** `{data, total}` and the rest of `/api/query`. @param {string} model @param {Record<string, unknown>} body */
  query: (model, body, options = {}) => request('POST', `/api/query/${seg(model)}`, body, options),
  /** @param {string} model @param {number} id @param {Record<string, unknown>} [body] */
  fetchRecord: (model, id, body = {}, options = {}) => request('POST', `/api/fetch/${seg(model)}/${id}`, body, options),
  /** @param {string} model @param {Record<string, unknown>} vals */
  create: (model, vals) => request('POST', `/api/create/${seg(model)}`, vals),
  /** @param {string} model @param {number} id @param {Record<string, unknown>} vals */
  update: (model, id, vals) => request('PUT', `/api/update/${seg(model)}/${id}`, vals),
  /** @param {string} model @param {number} id */
  remove: (model, id) => request('DELETE', `/api/delete/${seg(model)}/${id}`),
  /** @param {string} model @param {Record<string, unknown>} body `{ids}` or `{selection}` */
  bulkDelete: (model, body) => request('DELETE', `/api/bulk-delete/${seg(model)}`, body),
  /** @param {string} model @param {Record<string, unknown>} body */
  clone: (model, body) => request('POST', `/api/clone/${seg(model)}`, body),
  /** @param {string} model @param {Record<string, unknown>} body */
  nameSearch: (model, body, options = {}) => request('POST', `/api/name_search/${seg(model)}`, body, options),
  /** @param {string} model */
  registry: (model) => request('GET', `/api/get_registry/${seg(model)}`),
  /** @param {string} model @param {string} method @param {Record<string, unknown>} body */
  actionMeta: (model, method, body) => request('POST', `/api/action-meta/${seg(model)}/${seg(method)}`, body),
  /** @param {string} model @param {Record<string, unknown>} body */
  uiEffect: (model, body, options = {}) => request('POST', `/api/ui-effect/${seg(model)}`, body, options),
  /**
   * Runs a method; answers the `Response` (`raw`), since the answer may be a document and its
   * `X-Action-Close` / `X-Action-Reload` headers matter. Use `readAction` on it.
   * @param {string} model @param {string} method @param {Record<string, unknown>} body
   */
  execute: (model, method, body) => request('POST', `/api/execute/${seg(model)}/${seg(method)}`, body, { raw: true }),
};

/**
 * What an `execute` answer means for the page: the JSON result, or a document to save, and the
 * close/reload actions its headers ask for.
 * @param {Response} response
 * @returns {Promise<{result: unknown, document: {blob: Blob, filename: string} | null, close: boolean, reload: boolean}>}
 */
export async function readAction(response) {
  const close = response.headers.get('x-action-close') === '1';
  const reload = response.headers.get('x-action-reload') === '1';
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    const body = await response.json();
    return { result: body && typeof body === 'object' && 'result' in body ? body.result : body, document: null, close, reload };
  }
  const blob = await response.blob();
  return { result: null, document: { blob, filename: filenameOf(response.headers.get('content-disposition')) }, close, reload };
}

/**
 * The filename of a `Content-Disposition` header: RFC 6266 `filename*` (UTF-8) first, else `filename`.
 * @param {string | null} header
 */
export function filenameOf(header) {
  if (!header) return 'download';
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // fall through to the plain name
    }
  }
  const plain = /filename\s*=\s*"((?:[^"\\]|\\.)*)"|filename\s*=\s*([^;]+)/i.exec(header);
  return plain ? (plain[1] ?? plain[2] ?? 'download').replace(/\\(.)/g, '$1').trim() : 'download';
}

/**
 * Saves a blob as a file the way a browser download does.
 * @param {Blob} blob @param {string} filename
 */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}
