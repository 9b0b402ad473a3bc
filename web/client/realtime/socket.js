/**
 * The tab's one realtime socket (CONTRACTS C4, spec §6.1–§6.3): `GET /api/ws?db=<db>` with the
 * session cookie, opened once the person is signed in (`startRealtime`) and closed on sign-out
 * (`stopRealtime`). Everything else in the client listens through the small subscribe API below
 * and never touches the WebSocket itself.
 *
 * * Reconnects after any drop but its own: exponential backoff with full jitter between half and
 *   all of `min(30 s, 1 s × 2^attempt)`; back to the first step once the server said `hello`; at
 *   once when the browser comes back online.
 * * `{type: 'heartbeat'}` every 20 s while open (presence lifetime, the watch gate).
 * * Watches are counted per record (two views of one record watch it once) and sent only after
 *   `hello` (the server counts them from then on); every watch is sent again after a reconnect,
 *   since the server forgets them on disconnect.
 * * Close code 4001 (the session was revoked, signed out elsewhere, the user deactivated) is not
 *   retried: `onRevoked` decides (the app renews the session once, else goes to the sign-in page).
 * * A socket that could not even open asks `onOpenFailed` whether to go on (the app checks the
 *   session: an expired access cookie is renewed, a dead session goes to the sign-in page).
 */

export const HEARTBEAT_MS = 20_000;
export const FIRST_RETRY_MS = 1_000;
export const MAX_RETRY_MS = 30_000;
export const CLOSE_REVOKED = 4001;

/**
 * @typedef {{type: string, data: Record<string, any>}} Frame
 * @typedef {object} RealtimeOptions
 * @property {string} db the session's database (`?db=`: a browser cannot set headers on a socket)
 * @property {() => void} [onRevoked] the socket was closed with 4001
 * @property {() => Promise<boolean>} [onOpenFailed] the socket could not open; false stops trying
 */

/** @type {RealtimeOptions | null} */
let options = null;
/** @type {WebSocket | null} */
let socket = null;
let connected = false;
let attempt = 0;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let retryTimer;
/** @type {ReturnType<typeof setInterval> | undefined} */
let heartbeatTimer;
/** Watched records by `model:id`, with how many views watch each. @type {Map<string, {model: string, id: number, count: number}>} */
const watches = new Map();
/** @type {Set<(frame: Frame) => void>} */
const frameListeners = new Set();
/** @type {Set<(connected: boolean) => void>} */
const statusListeners = new Set();

/**
 * Opens the socket (once: a second call while started does nothing).
 * @param {RealtimeOptions} opts
 */
export function startRealtime(opts) {
  if (options) return;
  if (typeof WebSocket !== 'function') return;
  options = opts;
  attempt = 0;
  window.addEventListener('online', reconnectNow);
  open();
}

/** Closes the socket for good (sign-out); the subscriptions stay, quiet. */
export function stopRealtime() {
  if (!options) return;
  options = null;
  window.removeEventListener('online', reconnectNow);
  clearTimeout(retryTimer);
  const closing = socket;
  socket = null;
  stopHeartbeat();
  if (closing && closing.readyState <= WebSocket.OPEN) closing.close(1000, 'Signed out');
  setConnected(false);
}

/** True while the socket is open and the server said `hello`. */
export function isRealtimeConnected() {
  return connected;
}

/**
 * Every frame the server sends. @param {(frame: Frame) => void} listener @returns {() => void} unsubscribe
 */
export function onFrame(listener) {
  frameListeners.add(listener);
  return () => frameListeners.delete(listener);
}

/**
 * `realtime_data` frames of one `event` (`presence`, `import_progress`, `client_action`, …).
 * @param {string} event @param {(data: Record<string, any>) => void} listener @returns {() => void}
 */
export function onRealtime(event, listener) {
  return onFrame((frame) => {
    if (frame.type === 'realtime_data' && frame.data?.event === event) listener(frame.data);
  });
}

/**
 * `activity_update` frames of one `kind` (`record_changed`, `message`, …).
 * @param {string} kind @param {(data: Record<string, any>) => void} listener @returns {() => void}
 */
export function onActivity(kind, listener) {
  return onFrame((frame) => {
    if (frame.type === 'activity_update' && (frame.data?.kind ?? 'message') === kind) listener(frame.data);
  });
}

/**
 * Told `true` after each `hello` (a first connect or a reconnect) and `false` when the socket drops.
 * @param {(connected: boolean) => void} listener @returns {() => void}
 */
export function onRealtimeStatus(listener) {
  statusListeners.add(listener);
  return () => statusListeners.delete(listener);
}

/**
 * Watches a record for `record_changed` pings (spec §6.3) until the answered function is called.
 * @param {string} model @param {number} id @returns {() => void} unwatch
 */
export function watchRecord(model, id) {
  const key = `${model}:${id}`;
  const entry = watches.get(key);
  if (entry) entry.count++;
  else {
    watches.set(key, { model, id, count: 1 });
    if (connected) send({ type: 'watch', data: { model, id } });
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const current = watches.get(key);
    if (!current) return;
    if (--current.count > 0) return;
    watches.delete(key);
    if (connected) send({ type: 'unwatch', data: { model, id } });
  };
}

/** @param {Record<string, unknown>} frame */
function send(frame) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
}

function open() {
  if (!options) return;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws?db=${encodeURIComponent(options.db)}`;
  let ws;
  try {
    ws = new WebSocket(url);
  } catch {
    scheduleRetry(false);
    return;
  }
  socket = ws;
  let opened = false;
  ws.addEventListener('open', () => {
    opened = true;
  });
  ws.addEventListener('message', (event) => {
    if (ws !== socket) return;
    /** @type {Frame} */
    let frame;
    try {
      frame = JSON.parse(typeof event.data === 'string' ? event.data : '');
    } catch {
      return;
    }
    if (!frame || typeof frame !== 'object' || typeof frame.type !== 'string') return;
    if (frame.type === 'realtime_data' && frame.data?.event === 'hello') {
      attempt = 0;
      for (const { model, id } of watches.values()) send({ type: 'watch', data: { model, id } });
      startHeartbeat();
      setConnected(true);
    }
    if (frame.type === 'error') console.warn('FieldForge realtime:', frame.data?.detail);
    for (const listener of [...frameListeners]) {
      try {
        listener(frame);
      } catch (err) {
        console.error('FieldForge realtime: a listener failed', err);
      }
    }
  });
  ws.addEventListener('close', (event) => {
    if (ws !== socket) return; // closed on purpose (stopRealtime, a replaced socket)
    socket = null;
    stopHeartbeat();
    setConnected(false);
    if (event.code === CLOSE_REVOKED) {
      const revoked = options?.onRevoked;
      options = null;
      window.removeEventListener('online', reconnectNow);
      revoked?.();
      return;
    }
    scheduleRetry(opened);
  });
}

/** @param {boolean} wasOpen the socket had opened (a drop) rather than failed to open (a refusal, the server down) */
function scheduleRetry(wasOpen) {
  if (!options) return;
  clearTimeout(retryTimer);
  const step = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt);
  attempt = Math.min(attempt + 1, 16);
  const delay = step / 2 + Math.random() * (step / 2);
  retryTimer = setTimeout(async () => {
    if (!options) return;
    if (!wasOpen && options.onOpenFailed) {
      let goOn = true;
      try {
        goOn = await options.onOpenFailed();
      } catch {
        // the check itself failed (the server is down): keep trying
      }
      if (!goOn) {
        stopRealtime();
        return;
      }
    }
    open();
  }, delay);
}

/** The browser is back online: try now rather than at the end of a long backoff. */
function reconnectNow() {
  if (!options || socket) return;
  clearTimeout(retryTimer);
  attempt = 0;
  open();
}

function startHeartbeat() {
  stopHeartbeat();
  heartbeatTimer = setInterval(() => send({ type: 'heartbeat' }), HEARTBEAT_MS);
}

function stopHeartbeat() {
  clearInterval(heartbeatTimer);
  heartbeatTimer = undefined;
}

/** @param {boolean} next */
function setConnected(next) {
  if (connected === next && !next) return;
  connected = next;
  for (const listener of [...statusListeners]) {
    try {
      listener(next);
    } catch (err) {
      console.error('FieldForge realtime: a listener failed', err);
    }
  }
}
