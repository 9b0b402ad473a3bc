/**
 * "New API reference link": a name (who the link is for) and an optional expiry date. Checked
 * here before sending; a refusal of the server is shown at the input it names.
 */
import { html } from '../../lib/html.js';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Dialog } from '../ui/dialog.js';
import { earliestExpiry, expiryProblem } from './expiry-date.js';
import { refusalOf } from './field-error.js';
import { SettingsField } from './settings-field.js';

/** @typedef {{id: number, name: string, token: string, url: string, expires_at: string | null}} CreatedShare */

const INPUTS = ['name', 'expires_at'];

/** @param {{onClose: () => void, onCreated: (share: CreatedShare) => void}} props */
export function ApiDocsShareDialog({ onClose, onCreated }) {
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [errors, setErrors] = useState(/** @type {Record<string, string>} */ ({}));
  const [formError, setFormError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);

  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    /** @type {Record<string, string>} */
    const found = {};
    if (!name.trim()) found.name = 'Enter a name, e.g. who the link is for.';
    const expiry = expiryProblem(expires);
    if (expiry) found.expires_at = expiry;
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) return;
    setBusy(true);
    try {
      onCreated(/** @type {CreatedShare} */ (await api.post('/api/api-docs-shares', { name: name.trim(), ...(expires ? { expires_at: expires } : {}) }, {})));
    } catch (err) {
      const { field, message } = refusalOf(err, INPUTS);
      if (field) setErrors({ [field]: message });
      else setFormError(message);
    } finally {
      setBusy(false);
    }
  };

  const footer = html`
    <button type="button" class="ff-button" onClick=${onClose} disabled=${busy}>Cancel</button>
    <button type="submit" form="ff-share-form" class="ff-button ff-button-primary" disabled=${busy}>${busy ? 'Creating…' : 'Create link'}</button>`;

  return html`<${Dialog} title="New API reference link" onClose=${onClose} footer=${footer} busy=${busy}>
    <form id="ff-share-form" class="ff-settings-form" onSubmit=${submit} noValidate>
      ${formError ? html`<p class="ff-error-text" role="alert">${formError}</p>` : null}
      <${SettingsField} label="Name" required error=${errors.name} hint="Who or what the link is for, e.g. “Integration partner”."
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input" type="text" maxlength="255" autocomplete="off" ...${attrs}
          value=${name} onInput=${(/** @type {InputEvent} */ e) => setName(/** @type {HTMLInputElement} */ (e.target).value)} />`} />
      <${SettingsField} label="Expiry date" error=${errors.expires_at}
        hint="The link stops working on this date (00:00 UTC). Leave empty for a link that works until it is revoked."
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input" type="date" min=${earliestExpiry()} ...${attrs}
          value=${expires} onInput=${(/** @type {InputEvent} */ e) => setExpires(/** @type {HTMLInputElement} */ (e.target).value)} />`} />
    </form>
  <//>`;
}
