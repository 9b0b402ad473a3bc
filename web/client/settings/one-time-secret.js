/**
 * A secret the server shows once (an API key, a share link): a warning that it cannot be shown
 * again, the value in a read-only field (selected on focus, so it can be copied by hand too) and
 * a Copy button.
 */
import { html } from '../../lib/html.js';
import { useId } from 'preact/hooks';
import { CopyButton } from './copy-button.js';

/** @param {{label: string, value: string, warning: string}} props */
export function OneTimeSecret({ label, value, warning }) {
  const id = `ff-secret-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  return html`<div class="ff-secret">
    <p class="ff-settings-warning" id=${`${id}-warning`}><strong>Shown only once.</strong> ${warning}</p>
    <label class="ff-label" for=${id}>${label}</label>
    <div class="ff-secret__row">
      <input id=${id} class="ff-input ff-secret__value" type="text" readonly value=${value} aria-describedby=${`${id}-warning`}
        spellcheck=${false} autocomplete="off" onFocus=${(/** @type {FocusEvent} */ e) => /** @type {HTMLInputElement} */ (e.target).select()} />
      <${CopyButton} text=${value} what=${label} />
    </div>
  </div>`;
}
