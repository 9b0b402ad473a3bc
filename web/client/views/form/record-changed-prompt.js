/**
 * The form's non-modal prompt when its record changed on the server (spec §6.3, CONTRACTS C2):
 * with a clean form "This record was changed by <name>" and `Reload`; with unsaved edits
 * `Save & reload` and `Discard & reload`, and the edits stay untouched until one is chosen.
 * `Dismiss` hides it (keep working; the next change shows it again). The changed fields are named
 * by their labels. It is a `role="alert"` region (announced once, never stealing the focus from
 * the field being typed in) whose buttons are ordinary buttons in the tab order.
 */
import { html } from '../../../lib/html.js';

/**
 * @typedef {{by: string | null, fields: string[], seq: number}} RecordChange
 *   `by` null: the server asked for a reload (a client action), nobody in particular.
 */

/**
 * @param {{
 *   change: RecordChange,
 *   dirty: boolean,
 *   busy: boolean,
 *   labels: string[],
 *   onReload: () => void,
 *   onSaveAndReload: () => void,
 *   onDiscardAndReload: () => void,
 *   onDismiss: () => void,
 * }} props
 */
export function RecordChangedPrompt({ change, dirty, busy, labels, onReload, onSaveAndReload, onDiscardAndReload, onDismiss }) {
  const who = change.by ? `This record was changed by ${change.by}` : 'This record has newer data on the server';
  return html`<div class="ff-record-changed" role="alert" data-state=${dirty ? 'dirty' : 'clean'}>
    <p class="ff-record-changed__text">
      <strong>${who}.</strong>
      ${labels.length ? html` <span>Changed: ${labels.join(', ')}.</span>` : null}
      ${dirty ? html` <span>Your unsaved edits are kept until you choose.</span>` : null}
    </p>
    <div class="ff-record-changed__buttons">
      ${dirty
        ? html`<button type="button" class="ff-button ff-button-primary" disabled=${busy} onClick=${onSaveAndReload}>Save & reload</button>
          <button type="button" class="ff-button" disabled=${busy} onClick=${onDiscardAndReload}>Discard & reload</button>`
        : html`<button type="button" class="ff-button ff-button-primary" disabled=${busy} onClick=${onReload}>Reload</button>`}
      <button type="button" class="ff-button" disabled=${busy} onClick=${onDismiss}>Dismiss</button>
    </div>
  </div>`;
}
