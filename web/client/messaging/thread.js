/**
 * The record's messages, newest first (CONTRACTS C5 "Chatter"): one `article` per message with its
 * author, time and content. The content is HTML the server sanitised on write (an allow-list:
 * no scripts, event handlers, `javascript:` URLs or foreign styles), shown as such; the page's
 * Content-Security-Policy would refuse an inline script or a foreign image anyway. Internal notes
 * and system messages are marked as such. A message's files (a live-chat visitor's) are links to
 * the file store, which the reader's own session opens.
 */
import { html } from '../../lib/html.js';
import { TimeLabel } from './time-label.js';

const KINDS = { note: 'Note', notification: 'Update' };

/** @param {{messages: import('./use-thread.js').ThreadMessage[], lang?: string | null}} props */
export function Thread({ messages, lang }) {
  if (!messages.length) return html`<p class="ff-thread__empty">No messages yet.</p>`;
  return html`<div class="ff-thread">
    ${messages.map((m) => {
      const headId = `ff-message-${m.id}`;
      const kind = KINDS[/** @type {keyof typeof KINDS} */ (m.message_type)] ?? null;
      return html`<article key=${m.id} class=${`ff-message ff-message--${m.message_type}`} aria-labelledby=${headId} data-message-id=${m.id}>
        <header class="ff-message__head" id=${headId}>
          <strong class="ff-message__author">${m.author?.display_name || m.author_name || 'System'}</strong>
          ${kind ? html`<span class="ff-badge">${kind}</span>` : null}
          <${TimeLabel} iso=${m.created_date} lang=${lang} />
        </header>
        <div class="ff-message__content" dangerouslySetInnerHTML=${{ __html: String(m.content ?? '') }}></div>
        ${m.attachments?.length ? html`<ul class="ff-message__files" aria-label="Attachments">
          ${m.attachments.map((a) => html`<li key=${a.id}><a href=${`/filestore/download/${a.id}`} download=${a.name}>${a.name}</a></li>`)}
        </ul>` : null}
      </article>`;
    })}
  </div>`;
}
