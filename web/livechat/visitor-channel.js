/**
 * The visitor's socket (spec §6.4, CONTRACTS C5 "Live chat"): `history` on connect, then every
 * public message of the session. The channel keeps the messages by id, so an echo, a repeated
 * frame or a message both posted here and pushed is shown once, and the newest id *received over
 * the socket* (never one of our own posts' answers: an agent's reply may sit between them) is the
 * `after_id` of the next connection, whose history then holds exactly what was missed.
 *
 * A lost socket is retried with exponential backoff and full jitter (1 s doubling to 30 s, each
 * wait drawn from its upper half), at once when the browser comes back online; a socket that
 * never opened asks whether the token still holds (`probeToken`): a closed chat ends the channel
 * instead of retrying for ever. A heartbeat goes every 25 s, `typing` at most every 3 s.
 */
import { chatUrl, probeToken } from './visitor-requests.js';

/**
 * @typedef {{id: number, name: string, mimetype: string | null, url?: string}} ChatAttachment
 * @typedef {{id: number, content: string, author_name: string, is_agent: boolean, created_date: string,
 *   attachments: ChatAttachment[], pending?: boolean, text?: string}} ChatMessage
 * @typedef {'connecting' | 'online' | 'offline' | 'ended'} ChannelState
 * @typedef {{
 *   onMessages(messages: ChatMessage[], arrived: ChatMessage[]): void,
 *   onState(state: ChannelState, retryAt: number | null): void,
 *   onHistory(info: {agents_online: boolean}): void,
 * }} ChannelListener
 */

export const HEARTBEAT_MS = 25_000;
export const TYPING_EVERY_MS = 3_000;
export const FIRST_RETRY_MS = 1_000;
export const MAX_RETRY_MS = 30_000;
/** The server's close code for a chat that ended (`realtime/visitor-hub.ts`). */
export const CLOSE_CHAT_ENDED = 4000;

export class VisitorChannel {
  /** @type {Map<number, ChatMessage>} */
  #messages = new Map();
  #lastId = 0;
  /** @type {WebSocket | null} */
  #ws = null;
  #attempts = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  #retry;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  #heartbeat;
  #typingAt = 0;
  #stopped = false;
  /** @type {ChannelState} */
  state = 'connecting';

  /** @param {{server: string, db: string, token: string}} session @param {ChannelListener} listener */
  constructor(session, listener) {
    this.session = session;
    this.listener = listener;
    this.onBrowserOnline = () => this.reconnectNow();
    window.addEventListener('online', this.onBrowserOnline);
    this.#open();
  }

  /** The messages in order of id. */
  get messages() {
    return [...this.#messages.values()].sort((a, b) => a.id - b.id);
  }

  /** Adds messages (new ids) and replaces known ones (a pending post by its echo); answers the new ones. */
  add(/** @type {ChatMessage[]} */ list, fromSocket = true) {
    /** @type {ChatMessage[]} */
    const arrived = [];
    for (const m of list) {
      if (!m || !Number.isSafeInteger(m.id)) continue;
      if (fromSocket && m.id > this.#lastId) this.#lastId = m.id;
      const known = this.#messages.get(m.id);
      if (known && !known.pending) continue;
      this.#messages.set(m.id, m);
      if (!known) arrived.push(m);
    }
    // A pending message confirmed by the server arrives as none new, but its entry changed.
    if (list.length) this.listener.onMessages(this.messages, arrived);
    return arrived;
  }

  /** Sends a `typing` frame, at most every few seconds. */
  typing() {
    const now = Date.now();
    if (now - this.#typingAt < TYPING_EVERY_MS || this.#ws?.readyState !== WebSocket.OPEN) return;
    this.#typingAt = now;
    this.#ws.send(JSON.stringify({ type: 'typing' }));
  }

  /** Tries again now (the visitor asked, or the browser is online again). */
  reconnectNow() {
    if (this.#stopped || this.state === 'online' || this.state === 'connecting') return;
    clearTimeout(this.#retry);
    this.#attempts = 0;
    this.#open();
  }

  /** Ends the channel for good: no socket, no retry. */
  stop() {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#heartbeat);
    window.removeEventListener('online', this.onBrowserOnline);
    const ws = this.#ws;
    this.#ws = null;
    ws?.close(1000, 'bye');
  }

  /** @param {ChannelState} state @param {number | null} [retryAt] */
  #setState(state, retryAt = null) {
    this.state = state;
    this.listener.onState(state, retryAt);
  }

  #open() {
    const { server, db, token } = this.session;
    const url = chatUrl(server.replace(/^http/, 'ws'), '/livechat/ws', db, this.#lastId ? { token, after_id: String(this.#lastId) } : { token });
    this.#setState('connecting');
    const ws = new WebSocket(url);
    this.#ws = ws;
    let opened = false;
    ws.onopen = () => { opened = true; };
    ws.onmessage = (event) => {
      let frame;
      try {
        frame = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (frame?.type === 'history') {
        this.#attempts = 0;
        this.add(Array.isArray(frame.messages) ? frame.messages : []);
        this.listener.onHistory({ agents_online: frame.agents_online !== false });
        this.#setState('online');
        clearInterval(this.#heartbeat);
        this.#heartbeat = setInterval(() => {
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'heartbeat' }));
        }, HEARTBEAT_MS);
      } else if (frame?.type === 'message' && frame.message) {
        this.add([frame.message]);
      }
    };
    ws.onclose = (event) => {
      if (ws !== this.#ws) return;
      this.#ws = null;
      clearInterval(this.#heartbeat);
      if (this.#stopped) return;
      if (event.code === CLOSE_CHAT_ENDED) return this.#end();
      if (opened) return this.#scheduleRetry();
      void probeToken(server, db, token).then((answer) => {
        if (this.#stopped) return;
        if (answer === 'invalid') this.#end();
        else this.#scheduleRetry();
      });
    };
  }

  #end() {
    this.stop();
    this.#setState('ended');
  }

  #scheduleRetry() {
    const ceiling = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.#attempts);
    const wait = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    this.#attempts += 1;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.#open(), wait);
    this.#setState('offline', Date.now() + wait);
  }
}
