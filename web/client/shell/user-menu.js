/**
 * The signed-in person at the top right: a button with their name opening a small panel (who,
 * which database and company) with a link to their own profile ("My profile": language, password,
 * second factor) and "Sign out". A disclosure (`aria-expanded`), closed by Escape
 * (focus back on the button) or a click elsewhere.
 */
import { html } from '../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { signOut } from './session.js';

/** @param {{session: import('./session.js').Session}} props */
export function UserMenu({ session }) {
  const [open, setOpen] = useState(false);
  const root = useRef(/** @type {HTMLDivElement | null} */ (null));
  const button = useRef(/** @type {HTMLButtonElement | null} */ (null));
  const { user } = session;

  useEffect(() => {
    if (!open) return undefined;
    /** @param {MouseEvent} event */
    const outside = (event) => {
      if (root.current && !root.current.contains(/** @type {Node} */ (event.target))) setOpen(false);
    };
    /** @param {KeyboardEvent} event */
    const escape = (event) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener('mousedown', outside);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('mousedown', outside);
      document.removeEventListener('keydown', escape);
    };
  }, [open]);

  const initials = user.name.split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0]).join('').toUpperCase();
  return html`<div class="ff-user-menu" ref=${root}>
    <button type="button" ref=${button} class="ff-user-menu__button" aria-expanded=${open ? 'true' : 'false'} aria-controls="ff-user-panel"
      onClick=${() => setOpen(!open)}>
      <span class="ff-user-menu__avatar" aria-hidden="true">${initials || '?'}</span>
      <span class="ff-user-menu__name">${user.name}</span>
    </button>
    <div id="ff-user-panel" class="ff-user-menu__panel" hidden=${!open}>
      <p class="ff-user-menu__who"><strong>${user.name}</strong>${user.email ? html`<br /><span>${user.email}</span>` : null}</p>
      <dl class="ff-user-menu__facts">
        <dt>Database</dt><dd>${session.db}</dd>
        ${user.company ? html`<dt>Company</dt><dd>${user.company.name}</dd>` : null}
      </dl>
      <a class="ff-button" href="#action=core.action_profile" onClick=${() => setOpen(false)}>My profile</a>
      <button type="button" class="ff-button" onClick=${() => { setOpen(false); void signOut(); }}>Sign out</button>
    </div>
  </div>`;
}
