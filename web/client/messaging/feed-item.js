/**
 * One item of the bell's feed: who wrote, on which record (a link opening its form), the text and
 * when; an unread item is marked (a dot, and "Unread" for screen readers) and has its own `Mark
 * as read` button (the manual tick of spec §6.5 rule 5).
 */
import { html } from '../../lib/html.js';
import { recordHash } from './record-link.js';
import { TimeLabel } from './time-label.js';

/**
 * @param {{item: import('./activity-stream.js').FeedItem, lang?: string | null, busy: boolean,
 *   onMarkRead: (item: import('./activity-stream.js').FeedItem) => void, onOpen: () => void}} props
 */
export function FeedItem({ item, lang, busy, onMarkRead, onOpen }) {
  const author = item.author?.display_name || item.author_name || 'Someone';
  const record = item.record_name || `${item.model} #${item.document}`;
  return html`<li class=${`ff-feed-item${item.read ? '' : ' is-unread'}`} data-message-id=${item.message_id}>
    <p class="ff-feed-item__head">
      ${item.read ? null : html`<span class="ff-feed-item__dot" aria-hidden="true"></span><span class="ff-visually-hidden">Unread: </span>`}
      <strong class="ff-feed-item__author">${author}</strong>
      <span class="ff-feed-item__on"> on </span>
      <a class="ff-feed-item__record" href=${recordHash(item.model, item.document)} onClick=${onOpen}>${record}</a>
    </p>
    ${item.body ? html`<p class="ff-feed-item__body">${item.body}</p>` : null}
    <div class="ff-feed-item__foot">
      <${TimeLabel} iso=${item.created_date} lang=${lang} />
      ${item.message_type === 'note' ? html`<span class="ff-badge">Note</span>` : null}
      ${item.read ? null : html`<button type="button" class="ff-button ff-button-small" aria-disabled=${busy ? 'true' : undefined} onClick=${() => onMarkRead(item)}>Mark as read</button>`}
    </div>
  </li>`;
}
