/**
 * The bell's panel (CONTRACTS C5 "Bell"): a non-modal dialog named `Notifications` listing the
 * caller's feed newest first, a page at a time (`Load more` asks for the items older than the last
 * one shown), with `Mark as read` on each unread item and `Mark all as read` for the lot. A new
 * message while it is open comes in at the top. Escape closes it and gives the focus back to the
 * bell; a click outside closes it too. Failures say the server's reason in place.
 */
import { html } from '../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { onActivity } from '../realtime/socket.js';
import { FEED_PAGE, feedPage, markRead } from './activity-stream.js';
import { FeedItem } from './feed-item.js';
import { useUnreadCount } from './unread-count.js';

/** @typedef {import('./activity-stream.js').FeedItem} Item */

/** @param {unknown} err */
const reason = (err) => (err instanceof Error ? err.message : String(err));

/** The newest page merged over what is shown: new items on top, known ones refreshed. @param {Item[]} shown @param {Item[]} fresh */
function mergeNewest(shown, fresh) {
  const byId = new Map(fresh.map((i) => [i.message_id, i]));
  const oldest = fresh.length ? fresh[fresh.length - 1].message_id : Infinity;
  return [...fresh, ...shown.filter((i) => !byId.has(i.message_id) && i.message_id < oldest)];
}

/**
 * @param {{id: string, lang?: string | null, containerRef: {current: HTMLElement | null}, onClose: (refocus: boolean) => void}} props
 */
export function NotificationPanel({ id, lang, containerRef, onClose }) {
  const [items, setItems] = useState(/** @type {Item[] | null} */ (null));
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const panel = useRef(/** @type {HTMLDivElement | null} */ (null));
  const firstPage = useRef(false);
  const running = useRef(false);
  const { count } = useUnreadCount();
  const titleId = `${id}-title`;

  const loadNewest = async () => {
    try {
      const fresh = await feedPage();
      setItems((shown) => (shown ? mergeNewest(shown, fresh) : fresh));
      // Whether older items exist is known from the first page; later refreshes only add on top.
      if (!firstPage.current) {
        firstPage.current = true;
        setHasMore(fresh.length >= FEED_PAGE);
      }
      setError(null);
    } catch (err) {
      setError(reason(err));
      setItems((shown) => shown ?? []);
    }
  };

  useEffect(() => {
    panel.current?.focus();
    void loadNewest();
    const off = onActivity('message', () => void loadNewest());
    /** @param {MouseEvent} event */
    const outside = (event) => {
      if (containerRef.current && !containerRef.current.contains(/** @type {Node} */ (event.target))) onClose(false);
    };
    // Escape wherever the focus is (it may have left the panel), as the user menu does.
    /** @param {KeyboardEvent} event */
    const escape = (event) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      event.preventDefault();
      onClose(true);
    };
    document.addEventListener('mousedown', outside);
    document.addEventListener('keydown', escape);
    return () => {
      off();
      document.removeEventListener('mousedown', outside);
      document.removeEventListener('keydown', escape);
    };
  }, []);

  // Buttons are not disabled while a request runs (a disabled button loses the keyboard focus):
  // a second press meanwhile is ignored.
  /** @param {number} messageId */
  const focusLinkOf = (messageId) => requestAnimationFrame(() =>
    /** @type {HTMLElement | null | undefined} */ (panel.current?.querySelector(`[data-message-id="${messageId}"] a`))?.focus());

  /** @param {() => Promise<void>} work */
  const act = async (work) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(reason(err));
    } finally {
      running.current = false;
      setBusy(false);
    }
  };

  const loadMore = () => act(async () => {
    const last = items?.[items.length - 1];
    if (!last) return;
    const older = await feedPage({ beforeId: last.message_id });
    setItems((shown) => [...(shown ?? []), ...older.filter((i) => !(shown ?? []).some((s) => s.message_id === i.message_id))]);
    setHasMore(older.length >= FEED_PAGE);
    // The keyboard goes on where the new items start (the button may be gone).
    if (older[0]) focusLinkOf(older[0].message_id);
  });

  /** @param {Item} item */
  const markOne = (item) => act(async () => {
    await markRead({ message_id: item.message_id });
    setItems((shown) => (shown ?? []).map((i) => (i.message_id === item.message_id ? { ...i, read: true } : i)));
    // The focus was on the button that went away: keep it in the item.
    focusLinkOf(item.message_id);
  });

  const markAll = () => act(async () => {
    await markRead({ all: true });
    setItems((shown) => (shown ?? []).map((i) => ({ ...i, read: true })));
    // The button is disabled now that nothing is unread: the focus stays in the panel.
    panel.current?.focus();
  });

  const unreadShown = (items ?? []).some((i) => !i.read);
  return html`<div id=${id} ref=${panel} class="ff-notifications" role="dialog" aria-labelledby=${titleId} tabindex="-1"
      aria-busy=${items === null || busy ? 'true' : 'false'}>
    <header class="ff-notifications__header">
      <h2 id=${titleId} class="ff-notifications__title">Notifications</h2>
      <button type="button" class="ff-button ff-button-small" disabled=${count === 0 && !unreadShown} onClick=${markAll}>Mark all as read</button>
      <button type="button" class="ff-icon-button" aria-label="Close notifications" onClick=${() => onClose(true)}>×</button>
    </header>
    ${error ? html`<p class="ff-notifications__error" role="alert">${error}</p>` : null}
    ${items === null ? html`<p class="ff-notifications__empty" role="status">Loading…</p>` : null}
    ${items !== null && !items.length && !error ? html`<p class="ff-notifications__empty">No notifications yet. Messages on the records you follow appear here.</p>` : null}
    ${items?.length ? html`<ul class="ff-notifications__list" aria-label="Messages">
      ${items.map((item) => html`<${FeedItem} key=${item.message_id} item=${item} lang=${lang} busy=${busy}
        onMarkRead=${markOne} onOpen=${() => onClose(false)} />`)}
    </ul>` : null}
    ${hasMore ? html`<div class="ff-notifications__more">
      <button type="button" class="ff-button" aria-disabled=${busy ? 'true' : undefined} onClick=${loadMore}>Load more</button>
    </div>` : null}
  </div>`;
}
