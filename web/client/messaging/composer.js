/**
 * The chatter's composer (CONTRACTS C5 "Chatter"): `Send message` (a public `comment`: the
 * record's followers are notified) or `Log note` (an internal `note`: only those it @mentions are),
 * a text box labelled `Message` with `@` mentions, and `Send`, which posts through the model's
 * `message_post`. A refused post keeps the text and says the server's reason.
 */
import { html } from '../../lib/html.js';
import { useId, useState } from 'preact/hooks';
import { api, readAction } from '../api.js';
import { MentionTextarea } from './mention-textarea.js';
import { mentionedIds, messageHtml } from './message-html.js';

/** @typedef {'comment' | 'note'} Mode */

const HINTS = {
  comment: 'Followers of this record are notified. Type @ to mention someone.',
  note: 'An internal note: only the people you @mention are notified.',
};

/** @param {{model: string, id: number, onPosted: () => void}} props */
export function Composer({ model, id, onPosted }) {
  const base = `ff-composer-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const [mode, setMode] = useState(/** @type {Mode} */ ('comment'));
  const [text, setText] = useState('');
  const [picked, setPicked] = useState(/** @type {{id: number, display_name: string}[]} */ ([]));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [said, setSaid] = useState('');

  const send = async () => {
    if (busy || !text.trim()) return;
    setBusy(true);
    setError(null);
    setSaid('');
    try {
      const inputs = { content: messageHtml(text), message_type: mode, mention_ids: mentionedIds(text, picked) };
      await readAction(await api.execute(model, 'message_post', { ids: [id], request_body: { inputs } }));
      setText('');
      setPicked([]);
      setSaid(mode === 'note' ? 'Note logged.' : 'Message sent.');
      onPosted();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  /** @param {Mode} next */
  const modeButton = (next, label) => html`<button type="button" class=${`ff-button ff-composer__mode${mode === next ? ' is-active' : ''}`}
    aria-pressed=${mode === next ? 'true' : 'false'} onClick=${() => { setMode(next); document.getElementById(`${base}-text`)?.focus(); }}>${label}</button>`;

  return html`<form class=${`ff-composer ff-composer--${mode}`} aria-label="Write a message" noValidate
      onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); void send(); }}>
    <div class="ff-composer__modes" role="group" aria-label="Kind of message">
      ${modeButton('comment', 'Send message')}
      ${modeButton('note', 'Log note')}
    </div>
    <label class="ff-label" for=${`${base}-text`}>Message</label>
    <${MentionTextarea} value=${text} onValue=${(/** @type {string} */ v) => { setText(v); setError(null); }}
      onMention=${(/** @type {{id: number, display_name: string}} */ c) => setPicked((p) => [...p, c])} onSubmit=${() => void send()}
      disabled=${busy} placeholder=${mode === 'note' ? 'Log an internal note…' : 'Write to the followers…'}
      attrs=${{ id: `${base}-text`, 'aria-describedby': error ? `${base}-error ${base}-hint` : `${base}-hint`, 'aria-invalid': error ? 'true' : undefined }} />
    <p id=${`${base}-hint`} class="ff-composer__hint">${HINTS[mode]}</p>
    ${error ? html`<p id=${`${base}-error`} class="ff-error-text" role="alert">${error}</p>` : null}
    <div class="ff-composer__actions">
      <button type="submit" class="ff-button ff-button-primary" disabled=${busy || !text.trim()}>${busy ? 'Sending…' : 'Send'}</button>
      <span class="ff-visually-hidden" role="status">${said}</span>
    </div>
  </form>`;
}
