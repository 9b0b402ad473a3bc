/**
 * The visitor's HTTP posts (spec §4.10, CONTRACTS C5 "Live chat"): what the visitor sends never
 * goes over the socket. Every call names the database by `?db=` (a page of another site sends no
 * `X-DB-NAME` of ours without a preflight it does not need) and carries no credentials: the token
 * is in the body. A refusal is a `ChatRequestError` with the server's status and `detail`.
 */

/**
 * A URL of the chat server with its query: the database as `db` when the page named one (otherwise
 * the server chooses by host, as for `/api`).
 * @param {string} server @param {string} path @param {string} db @param {Record<string, string>} [params]
 */
export function chatUrl(server, path, db, params = {}) {
  const url = new URL(path, server);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (db) url.searchParams.set('db', db);
  return url;
}

export class ChatRequestError extends Error {
  /** @param {string} message @param {number} status 0 when the server could not be reached */
  constructor(message, status) {
    super(message);
    this.name = 'ChatRequestError';
    this.status = status;
  }
}

/**
 * @param {string} server @param {string} db @param {string} path @param {Record<string, unknown>} body
 * @returns {Promise<any>}
 */
async function post(server, db, path, body) {
  let res;
  try {
    res = await fetch(chatUrl(server, path, db), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
    });
  } catch {
    throw new ChatRequestError('You are offline: nothing was sent.', 0);
  }
  const answer = await res.json().catch(() => null);
  if (!res.ok) {
    const detail = typeof answer?.detail === 'string' ? answer.detail : `The chat server answered ${res.status}.`;
    throw new ChatRequestError(detail, res.status);
  }
  return answer;
}

/**
 * @param {string} server @param {string} db @param {{altcha: string, name?: string, email?: string}} body
 * @returns {Promise<{session_id: number, token: string, agents_online: boolean}>}
 */
export const startSession = (server, db, body) => post(server, db, '/livechat/session', body);

/** @param {string} server @param {string} db @param {string} token @param {string} content @returns {Promise<{id: number}>} */
export const postMessage = (server, db, token, content) => post(server, db, '/livechat/message', { token, content });

/**
 * @param {string} server @param {string} db @param {string} token @param {File} file
 * @returns {Promise<{id: number, message_id: number, name: string, mimetype: string | null, url: string}>}
 */
export async function postAttachment(server, db, token, file) {
  const base64 = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new ChatRequestError(`The file ${file.name} could not be read.`, 0));
    reader.readAsDataURL(file);
  });
  return post(server, db, '/livechat/attachment', { token, name: file.name, base64, ...(file.type ? { mimetype: file.type } : {}) });
}

/**
 * Whether `token` still opens its chat, asked when the socket could not open (a browser does not
 * tell a refused upgrade from a network failure): the socket's URL without an upgrade answers 401
 * for a bad or closed token and 400 for a good one.
 * @param {string} server @param {string} db @param {string} token
 * @returns {Promise<'valid' | 'invalid' | 'unreachable'>}
 */
export async function probeToken(server, db, token) {
  try {
    const res = await fetch(chatUrl(server, '/livechat/ws', db, { token }), { cache: 'no-store', credentials: 'omit' });
    if (res.status === 401) return 'invalid';
    return res.status >= 500 ? 'unreachable' : 'valid';
  } catch {
    return 'unreachable';
  }
}
