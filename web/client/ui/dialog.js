/**
 * A modal dialog on the browser's own `<dialog>` element: `showModal()` gives the role, the focus
 * trap, Escape to cancel and an inert page behind, so nothing here re-implements them. The dialog
 * is named by its title (`aria-labelledby`), focus goes to the first field (or the first button)
 * when it opens, and returns to what had it when it closes.
 *
 *   html`<${Dialog} title="Reassign tasks" onClose=${close} footer=${buttons}>…<//>`
 *
 * Render it only while it is open; `onClose` runs on Escape, on the close button and on a click
 * on the backdrop.
 */
import { html } from '../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Dialogs render in several Preact roots (confirmDialog has its own), whose `useId`s collide: ids come from one page-wide counter. */
let dialogCount = 0;

/**
 * @param {{title: string, onClose: () => void, children?: unknown, footer?: unknown, wide?: boolean, busy?: boolean}} props
 */
export function Dialog({ title, onClose, children, footer, wide = false, busy = false }) {
  const ref = useRef(/** @type {HTMLDialogElement | null} */ (null));
  const [titleId] = useState(() => `ff-dialog-title-${++dialogCount}`);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return undefined;
    const previous = /** @type {HTMLElement | null} */ (document.activeElement);
    if (!dialog.open) dialog.showModal();
    const first = /** @type {HTMLElement | null} */ (
      dialog.querySelector('[autofocus], .ff-dialog-body input:not([type=hidden]):not([disabled]), .ff-dialog-body select, .ff-dialog-body textarea') ??
        dialog.querySelector('.ff-dialog-footer button:not([disabled])')
    );
    first?.focus();
    /** @param {Event} event */
    const cancel = (event) => {
      event.preventDefault(); // the page decides when the dialog goes away
      closeRef.current();
    };
    dialog.addEventListener('cancel', cancel);
    return () => {
      dialog.removeEventListener('cancel', cancel);
      if (dialog.open) dialog.close();
      if (previous && document.contains(previous)) previous.focus();
    };
  }, []);

  /** @param {MouseEvent} event */
  const onBackdrop = (event) => {
    if (event.target === ref.current && !busy) onClose();
  };

  return html`<dialog ref=${ref} class=${`ff-dialog${wide ? ' ff-dialog-wide' : ''}`} aria-labelledby=${titleId} aria-busy=${busy ? 'true' : undefined} onClick=${onBackdrop}>
    <div class="ff-dialog-frame">
      <header class="ff-dialog-header">
        <h2 id=${titleId} class="ff-dialog-title">${title}</h2>
        <button type="button" class="ff-icon-button" aria-label="Close" onClick=${onClose} disabled=${busy}>×</button>
      </header>
      <div class="ff-dialog-body">${children}</div>
      ${footer ? html`<footer class="ff-dialog-footer">${footer}</footer>` : null}
    </div>
  </dialog>`;
}

/**
 * Asks a yes/no question in a dialog; resolves true when confirmed. For places outside a
 * component tree (guards), rendered into a node of its own.
 * @param {{title: string, message: string, confirm?: string, cancel?: string, danger?: boolean}} options
 * @returns {Promise<boolean>}
 */
export async function confirmDialog({ title, message, confirm = 'OK', cancel = 'Cancel', danger = false }) {
  const { render } = await import('preact');
  const host = document.createElement('div');
  document.body.append(host);
  return new Promise((resolve) => {
    /** @param {boolean} answer */
    const done = (answer) => {
      render(null, host);
      host.remove();
      resolve(answer);
    };
    const footer = html`
      <button type="button" class="ff-button" onClick=${() => done(false)}>${cancel}</button>
      <button type="button" class=${`ff-button ${danger ? 'ff-button-danger' : 'ff-button-primary'}`} autofocus onClick=${() => done(true)}>${confirm}</button>`;
    render(html`<${Dialog} title=${title} onClose=${() => done(false)} footer=${footer}><p>${message}</p><//>`, host);
  });
}
