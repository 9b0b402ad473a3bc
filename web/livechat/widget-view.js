/**
 * The widget's elements inside its shadow root (CONTRACTS C5 "Live-chat widget"): the launcher
 * `Chat with us` (with a count of replies that came while the panel was closed), and a panel
 * (`role="dialog"`, named `Chat`) holding either the start form (`Name`, `Email`, the `Altcha`
 * check, `Start chat`) or the chat: a notice when no agent is online, the message log
 * (`role="log"`, one `article` per message), the connection's status said plainly, and the
 * composer (`Message`, `Attach file`, `Send`). The view shows; `widget.js` decides.
 */
import { h } from './dom.js';

/** @typedef {import('./visitor-channel.js').ChatMessage} ChatMessage */

const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/** @param {string} iso */
function timeLabel(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : TIME.format(date);
}

/**
 * @param {ChatMessage} m
 * @param {string} server signed URLs are paths of our server, not of the page's site
 */
function messageElement(m, server) {
  const body = h('div', { class: 'body' });
  // Server content is sanitised HTML (the visitor's text escaped, an agent's through the sanitiser);
  // a pending post shows the text as typed until its echo arrives.
  if (m.pending) body.textContent = m.text ?? '';
  else body.innerHTML = m.content;
  const files = m.attachments?.length
    ? h('ul', { class: 'files', 'aria-label': 'Attachments' }, ...m.attachments.map((a) => h('li', {},
      a.url ? h('a', { href: new URL(a.url, server).href, target: '_blank', rel: 'noopener noreferrer' }, a.name) : a.name)))
    : null;
  return h('article', { class: `msg ${m.is_agent ? 'agent' : 'visitor'}${m.pending ? ' pending' : ''}`, 'data-message-id': m.id, 'aria-label': `${m.author_name}, ${timeLabel(m.created_date)}` },
    h('header', {}, h('span', { class: 'author' }, m.author_name), ' ', h('time', { datetime: m.created_date }, timeLabel(m.created_date))),
    body, files);
}

export function createView(/** @type {ShadowRoot} */ root, /** @type {string} */ server, /** @type {string} */ stylesheet) {
  const badge = h('span', { class: 'badge', 'aria-hidden': 'true', hidden: true });
  const unreadText = h('span', { id: 'ff-lc-unread', class: 'visually-hidden' });
  const launcher = h('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'ff-lc-panel', 'aria-describedby': 'ff-lc-unread' },
    h('span', {}, 'Chat with us'), badge);

  const closeButton = h('button', { type: 'button', class: 'icon', 'aria-label': 'Close chat' }, '×');
  const status = h('p', { class: 'status', role: 'status' });
  const retryButton = h('button', { type: 'button', class: 'link', hidden: true }, 'Reconnect now');

  // The start form.
  const nameInput = h('input', { id: 'ff-lc-name', name: 'name', autocomplete: 'name', maxlength: 120 });
  const emailInput = h('input', { id: 'ff-lc-email', name: 'email', type: 'email', autocomplete: 'email', maxlength: 254 });
  const altchaText = h('span', { 'aria-live': 'polite' }, 'Verifying you are human…');
  const altchaRetry = h('button', { type: 'button', class: 'link', hidden: true }, 'Try again');
  const altcha = h('div', { class: 'altcha', role: 'group', 'aria-label': 'Human verification', 'data-state': 'solving' }, altchaText, ' ', altchaRetry);
  const startError = h('p', { class: 'error', role: 'alert', hidden: true });
  const startButton = h('button', { type: 'submit', class: 'primary' }, 'Start chat');
  const startForm = h('form', { class: 'start', 'aria-label': 'Start a chat', novalidate: true },
    h('p', { class: 'intro' }, 'Ask us anything: we answer here.'),
    h('label', { for: 'ff-lc-name' }, 'Name'), nameInput,
    h('label', { for: 'ff-lc-email' }, 'Email'), emailInput,
    altcha, startError, startButton);

  // The chat.
  const notice = h('p', { class: 'notice', hidden: true });
  const log = h('div', { class: 'log', role: 'log', 'aria-label': 'Messages', tabindex: 0 });
  const empty = h('p', { class: 'empty' }, 'No messages yet: say hello.');
  log.append(empty);
  const ended = h('div', { class: 'ended', hidden: true }, h('p', {}, 'This chat has ended.'));
  const newChatButton = h('button', { type: 'button', class: 'primary' }, 'Start a new chat');
  ended.append(newChatButton);
  const textarea = h('textarea', { id: 'ff-lc-message', name: 'message', rows: 2, maxlength: 5000, placeholder: 'Write a message… (Enter sends, Shift+Enter a new line)' });
  const fileInput = h('input', { type: 'file', class: 'visually-hidden', tabindex: -1, 'aria-hidden': 'true' });
  const attachButton = h('button', { type: 'button', class: 'secondary' }, 'Attach file');
  const sendButton = h('button', { type: 'submit', class: 'primary' }, 'Send');
  const sendError = h('p', { class: 'error', role: 'alert', hidden: true });
  const composer = h('form', { class: 'composer', 'aria-label': 'Write to us' },
    h('label', { for: 'ff-lc-message', class: 'visually-hidden' }, 'Message'), textarea, fileInput,
    sendError, h('div', { class: 'actions' }, attachButton, sendButton));
  const chat = h('div', { class: 'chat', hidden: true }, notice, log, ended, composer);

  const panel = h('div', { id: 'ff-lc-panel', class: 'panel', role: 'dialog', 'aria-labelledby': 'ff-lc-title', hidden: true },
    h('header', {}, h('h2', { id: 'ff-lc-title' }, 'Chat'), closeButton),
    h('div', { class: 'connection' }, status, retryButton),
    startForm, chat);

  root.append(h('link', { rel: 'stylesheet', href: stylesheet }), h('div', { class: 'root' }, panel, launcher, unreadText));

  /** @type {Map<number, {message: ChatMessage, el: HTMLElement}>} */
  const shown = new Map();

  return {
    launcher, panel, closeButton, retryButton, startForm, nameInput, emailInput, altchaRetry, startButton,
    textarea, fileInput, attachButton, sendButton, composer, newChatButton, log,

    /** @param {boolean} open */
    setOpen(open) {
      panel.hidden = !open;
      launcher.setAttribute('aria-expanded', String(open));
    },
    /** @param {'start' | 'chat'} which */
    show(which) {
      startForm.hidden = which !== 'start';
      chat.hidden = which !== 'chat';
    },
    /** @param {number} n */
    setUnread(n) {
      badge.hidden = n === 0;
      badge.textContent = String(n);
      unreadText.textContent = n ? `${n} new ${n === 1 ? 'reply' : 'replies'}` : '';
    },
    /** @param {string} text @param {boolean} canRetry */
    setStatus(text, canRetry) {
      status.textContent = text;
      retryButton.hidden = !canRetry;
    },
    /** @param {'solving' | 'verified' | 'failed'} state */
    setAltcha(state) {
      altcha.dataset.state = state;
      altchaText.textContent = state === 'solving' ? 'Verifying you are human…' : state === 'verified' ? 'Verified' : 'Human verification failed.';
      altchaRetry.hidden = state !== 'failed';
    },
    /** @param {string | null} text */
    setStartError(text) {
      startError.hidden = !text;
      startError.textContent = text ?? '';
    },
    /** @param {string | null} text */
    setSendError(text) {
      sendError.hidden = !text;
      sendError.textContent = text ?? '';
    },
    /** @param {string | null} text */
    setNotice(text) {
      notice.hidden = !text;
      notice.textContent = text ?? '';
    },
    /** @param {boolean} isEnded */
    setEnded(isEnded) {
      ended.hidden = !isEnded;
      composer.hidden = isEnded;
    },
    /** @param {boolean} busy */
    setSending(busy) {
      sendButton.disabled = busy;
      attachButton.disabled = busy;
      composer.setAttribute('aria-busy', String(busy));
    },
    /** Shows `messages` (in order), building only the new and the changed, keeping the reader at the bottom. */
    renderMessages(/** @type {ChatMessage[]} */ messages) {
      const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
      empty.hidden = messages.length > 0;
      const ids = new Set(messages.map((m) => m.id));
      for (const [id, entry] of shown) if (!ids.has(id)) { entry.el.remove(); shown.delete(id); }
      /** @type {Element} */
      let previous = empty;
      for (const m of messages) {
        let entry = shown.get(m.id);
        if (!entry || entry.message !== m) {
          const el = messageElement(m, server);
          if (entry) entry.el.replaceWith(el);
          entry = { message: m, el };
          shown.set(m.id, entry);
        }
        if (previous.nextElementSibling !== entry.el) previous.after(entry.el);
        previous = entry.el;
      }
      if (atBottom) log.scrollTop = log.scrollHeight;
    },
    clearMessages() {
      for (const entry of shown.values()) entry.el.remove();
      shown.clear();
      empty.hidden = false;
    },
  };
}

/** @typedef {ReturnType<typeof createView>} WidgetView */
