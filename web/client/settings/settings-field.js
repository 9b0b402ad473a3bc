/**
 * One labelled control of a settings screen: the label names the control, and a hint or the
 * server's refusal under it is linked by `aria-describedby`; a refused control carries
 * `aria-invalid="true"` (CONTRACTS C2). The control itself is the caller's, built from the
 * attributes handed to `control`, so an input, a select or a date all get the same wiring.
 *
 *   html`<${SettingsField} label="Name" required error=${errors.name}
 *     control=${(attrs) => html`<input class="ff-input" ...${attrs} value=${name} onInput=${…} />`} />`
 */
import { html } from '../../lib/html.js';
import { useId } from 'preact/hooks';

/**
 * @typedef {{id: string, 'aria-invalid'?: 'true', 'aria-describedby'?: string, 'aria-required'?: 'true'}} ControlAttributes
 */

/**
 * @param {{label: string, control: (attrs: ControlAttributes) => unknown, error?: string | null, hint?: string | null, required?: boolean}} props
 */
export function SettingsField({ label, control, error = null, hint = null, required = false }) {
  const id = `ff-setting-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error ? errorId : '', hint ? hintId : ''].filter(Boolean).join(' ');
  /** @type {ControlAttributes} */
  const attrs = { id };
  if (error) attrs['aria-invalid'] = 'true';
  if (describedBy) attrs['aria-describedby'] = describedBy;
  if (required) attrs['aria-required'] = 'true';
  return html`<div class="ff-field ff-settings-field">
    <label class="ff-label" for=${id}>${label}${required ? html`<span class="ff-settings-required" aria-hidden="true"> *</span>` : null}</label>
    ${control(attrs)}
    ${error ? html`<p id=${errorId} class="ff-error-text">${error}</p>` : null}
    ${hint ? html`<p id=${hintId} class="ff-settings-hint">${hint}</p>` : null}
  </div>`;
}
