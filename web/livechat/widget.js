/**
 * The live-chat widget (CONTRACTS C5 "Live-chat widget", issue 28 item 5), for any web page:
 *
 *   <script type="module" src="https://HOST/livechat/widget.js" data-db="NAME"></script>
 *
 * (or `/livechat/widget.js?db=NAME`). It renders in a shadow root of its own element, so neither
 * the page's styles nor its own leak across, loads nothing but its own files from HOST, and keeps
 * the session's token in the page's `localStorage` (no cookie): a reload resumes the same chat and
 * its history arrives again. What the visitor sends goes over HTTP; what it receives comes over the
 * visitor socket, which reconnects by itself and misses nothing (`visitor-channel.js`). When no
 * agent is online the visitor is told that the answer will come here later; a lost connection is
 * said plainly, with its next attempt; a closed chat offers a new one.
 */
import { loadSession, saveSession } from './visitor-store.js';
import { solveAltcha } from './solve-altcha.js';
import { VisitorChannel } from './visitor-channel.js';
import { ChatRequestError, postAttachment, postMessage, startSession } from './visitor-requests.js';
import { createView } from './widget-view.js';

const TAG = 'fieldforge-livechat';
const NO_AGENT = 'No agent is online right now. Leave your message: an agent will answer here as soon as possible.';

const here = new URL(import.meta.url);
const server = here.origin;

/** The database: `?db=` of the script's URL, else its tag's `data-db`, else the server's choice by host. */
function configuredDb() {
  const fromUrl = here.searchParams.get('db');
  if (fromUrl) return fromUrl;
  const script = [...document.querySelectorAll('script[src]')].find((s) => {
    const src = new URL(/** @type {HTMLScriptElement} */ (s).src, location.href);
    return src.origin === here.origin && src.pathname === here.pathname;
  });
  return /** @type {HTMLElement | undefined} */ (script)?.dataset.db ?? '';
}

function mount() {
  const db = configuredDb();
  if (document.querySelector(`${TAG}[data-db="${CSS.escape(db)}"]`)) return; // the tag was added twice
  if (!customElements.get(TAG)) customElements.define(TAG, class extends HTMLElement {});
  const host = document.createElement(TAG);
  host.dataset.db = db;
  const view = createView(host.attachShadow({ mode: 'open' }), server, new URL('./widget.css', import.meta.url).href);
  document.body.append(host);

  let session = loadSession(server, db);
  /** @type {VisitorChannel | null} */
  let channel = null;
  /** @type {Promise<string> | null} */
  let altcha = null;
  /** @type {AbortController | null} */
  let solving = null;
  let unread = 0;
  let statusTimer = /** @type {ReturnType<typeof setInterval> | undefined} */ (undefined);

  const isOpen = () => !view.panel.hidden;

  function solveFresh() {
    solving?.abort();
    solving = new AbortController();
    view.setAltcha('solving');
    const mine = solveAltcha(server, db, solving.signal);
    altcha = mine;
    mine.then(() => { if (altcha === mine) view.setAltcha('verified'); }, () => { if (altcha === mine) view.setAltcha('failed'); });
  }

  /** @param {import('./visitor-channel.js').ChannelState} state @param {number | null} retryAt */
  function showState(state, retryAt) {
    clearInterval(statusTimer);
    if (state === 'online') view.setStatus('', false);
    else if (state === 'connecting') view.setStatus('Connecting…', false);
    else if (state === 'ended') view.setStatus('', false);
    else {
      const say = () => {
        const seconds = Math.max(0, Math.ceil(((retryAt ?? Date.now()) - Date.now()) / 1000));
        view.setStatus(navigator.onLine === false ? 'Offline: waiting for the network.' : `Offline: reconnecting in ${seconds} s.`, true);
      };
      say();
      statusTimer = setInterval(say, 1000);
    }
    if (state === 'ended') endChat();
  }

  function connect() {
    if (!session) return;
    channel?.stop();
    view.clearMessages();
    view.setEnded(false);
    view.show('chat');
    let first = true;
    channel = new VisitorChannel({ server, db, token: session.token }, {
      onMessages(messages, arrived) {
        view.renderMessages(messages);
        if (!first && !isOpen()) {
          unread += arrived.filter((m) => m.is_agent).length;
          view.setUnread(unread);
        }
      },
      onHistory({ agents_online }) {
        first = false;
        if (!agents_online && !channel?.messages.some((m) => m.is_agent)) view.setNotice(NO_AGENT);
      },
      onState: showState,
    });
  }

  function endChat() {
    channel?.stop();
    channel = null;
    session = null;
    saveSession(server, db, null);
    view.setEnded(true);
  }

  function openPanel() {
    view.setOpen(true);
    unread = 0;
    view.setUnread(0);
    if (session) {
      view.show('chat');
      if (!channel) connect();
      if (!view.composer.hidden) view.textarea.focus();
    } else {
      view.show('start');
      if (!altcha) solveFresh();
      view.nameInput.focus();
    }
  }

  function closePanel() {
    view.setOpen(false);
    view.launcher.focus();
  }

  view.launcher.addEventListener('click', () => (isOpen() ? closePanel() : openPanel()));
  view.closeButton.addEventListener('click', closePanel);
  view.panel.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.stopPropagation();
      closePanel();
    }
  });
  view.retryButton.addEventListener('click', () => channel?.reconnectNow());
  view.altchaRetry.addEventListener('click', solveFresh);
  view.newChatButton.addEventListener('click', () => {
    view.clearMessages();
    view.setNotice(null);
    view.setEnded(false);
    view.show('start');
    if (!altcha) solveFresh();
    view.nameInput.focus();
  });

  view.startForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const email = view.emailInput.value.trim();
    if (email && !view.emailInput.checkValidity()) {
      view.setStartError('Enter a valid email address, or leave it empty.');
      view.emailInput.focus();
      return;
    }
    view.setStartError(null);
    view.startButton.disabled = true;
    view.startButton.textContent = 'Starting…';
    try {
      if (!altcha) solveFresh();
      const token = await /** @type {Promise<string>} */ (altcha);
      altcha = null; // spent: a retry solves a fresh one
      const name = view.nameInput.value.trim();
      const started = await startSession(server, db, { altcha: token, ...(name ? { name } : {}), ...(email ? { email } : {}) });
      session = { token: started.token, session_id: started.session_id, name: name || 'Visitor' };
      saveSession(server, db, session);
      view.setNotice(started.agents_online ? null : NO_AGENT);
      connect();
      view.textarea.focus();
    } catch (err) {
      view.setStartError(err instanceof Error && err.message !== 'aborted' ? err.message : 'The chat could not be started.');
      if (!altcha) solveFresh();
    } finally {
      view.startButton.disabled = false;
      view.startButton.textContent = 'Start chat';
    }
  });

  /** Sends what `send` posts, showing it at once as pending until its echo comes; a refusal keeps the text. */
  async function sending(/** @type {() => Promise<import('./visitor-channel.js').ChatMessage>} */ send) {
    view.setSendError(null);
    view.setSending(true);
    try {
      const posted = await send();
      channel?.add([posted], false);
      return true;
    } catch (err) {
      view.setSendError(err instanceof ChatRequestError || err instanceof Error ? err.message : String(err));
      if (err instanceof ChatRequestError && err.status === 401) endChat();
      return false;
    } finally {
      view.setSending(false);
    }
  }

  const pending = (/** @type {number} */ id, /** @type {Partial<import('./visitor-channel.js').ChatMessage>} */ rest) => ({
    id, content: '', author_name: session?.name ?? 'Visitor', is_agent: false, created_date: new Date().toISOString(), attachments: [], pending: true, ...rest,
  });

  view.composer.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = view.textarea.value;
    if (!text.trim() || !session) return;
    const token = session.token;
    if (await sending(async () => pending((await postMessage(server, db, token, text)).id, { text }))) {
      if (view.textarea.value === text) view.textarea.value = '';
      view.textarea.focus();
    }
  });
  view.textarea.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      view.composer.requestSubmit();
    }
  });
  view.textarea.addEventListener('input', () => channel?.typing());
  view.attachButton.addEventListener('click', () => view.fileInput.click());
  view.fileInput.addEventListener('change', async () => {
    const file = view.fileInput.files?.[0];
    view.fileInput.value = '';
    if (!file || !session) return;
    const token = session.token;
    await sending(async () => {
      const posted = await postAttachment(server, db, token, file);
      return pending(posted.message_id, { text: '', attachments: [{ id: posted.id, name: posted.name, mimetype: posted.mimetype, url: posted.url }] });
    });
  });

  // A visitor coming back to the page: the chat resumes, its history arrives, replies are counted.
  if (session) connect();
}

if (document.body) mount();
else document.addEventListener('DOMContentLoaded', mount, { once: true });
