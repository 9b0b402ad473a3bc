/**
 * The bell in the shell's top bar (CONTRACTS C5 "Bell"): a button named `Notifications` whose
 * badge shows the unread count (hidden at 0; "99+" past 99), opening the feed panel. The badge
 * sits over the button rather than in it, so the button's name stays exactly `Notifications`
 * (what it shows must be in its name, WCAG 2.5.3); screen readers hear the exact figure as the
 * button's description. Not drawn at all in a database
 * without the messaging module.
 */
import { html } from '../../lib/html.js';
import { useRef, useState } from 'preact/hooks';
import { BellIcon } from '../ui/icons.js';
import { NotificationPanel } from './notification-panel.js';
import { useUnreadCount } from './unread-count.js';
import './stylesheet.js';

const PANEL_ID = 'ff-notifications';

/** @param {{lang?: string | null}} props */
export function Bell({ lang }) {
  const { available, count } = useUnreadCount();
  const [open, setOpen] = useState(false);
  const root = useRef(/** @type {HTMLDivElement | null} */ (null));
  const button = useRef(/** @type {HTMLButtonElement | null} */ (null));
  if (available === false) return null;

  /** @param {boolean} refocus */
  const close = (refocus) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };
  const described = count === 0 ? 'No unread notifications' : count === 1 ? '1 unread notification' : `${count} unread notifications`;
  return html`<div class="ff-bell" ref=${root}>
    <button type="button" ref=${button} class="ff-icon-button ff-bell__button" aria-label="Notifications"
      aria-haspopup="dialog" aria-expanded=${open ? 'true' : 'false'} aria-controls=${open ? PANEL_ID : undefined}
      aria-describedby="ff-bell-count" onClick=${() => setOpen(!open)}>
      <${BellIcon} />
    </button>
    ${count > 0 ? html`<span class="ff-bell__badge" aria-hidden="true" data-count=${count}>${count > 99 ? '99+' : count}</span>` : null}
    <span id="ff-bell-count" class="ff-visually-hidden">${described}</span>
    ${open ? html`<${NotificationPanel} id=${PANEL_ID} lang=${lang} containerRef=${root} onClose=${close} />` : null}
  </div>`;
}
