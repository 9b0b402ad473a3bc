/**
 * "New API key": a name, the groups the key's service account gets (its access), and an optional
 * expiry date. Checked here before sending (name, at least one group, a future date); a refusal
 * of the server is shown at the input it names. On success the caller is handed the created key.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Dialog } from '../ui/dialog.js';
import { earliestExpiry, expiryProblem } from './expiry-date.js';
import { refusalOf } from './field-error.js';
import { SettingsField } from './settings-field.js';

/** @typedef {{id: number, key: string, prefix: string, service_account: number, expires_at: string | null}} CreatedKey */
/** @typedef {{id: number, name: string, identifier: string | null, category: string | null}} GroupRow */

const INPUTS = ['name', 'groups', 'expires_at'];

/** @param {{onClose: () => void, onCreated: (key: CreatedKey & {name: string}) => void}} props */
export function ApiKeyDialog({ onClose, onCreated }) {
  const [name, setName] = useState('');
  const [groups, setGroups] = useState(/** @type {string[]} */ ([]));
  const [expires, setExpires] = useState('');
  const [choices, setChoices] = useState(/** @type {GroupRow[] | null} */ (null));
  const [errors, setErrors] = useState(/** @type {Record<string, string>} */ ({}));
  const [formError, setFormError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api.query('Group', { fields: ['name', 'identifier', 'category'], limit: 500 }).then(
      (answer) => setChoices(/** @type {GroupRow[]} */ (Array.isArray(answer) ? answer : answer.data ?? []).filter((g) => g.identifier)),
      (err) => setFormError(`The groups cannot be loaded: ${err.message}`),
    );
  }, []);

  /** @param {string} identifier @param {boolean} on */
  const toggle = (identifier, on) => setGroups((list) => (on ? [...list, identifier] : list.filter((g) => g !== identifier)));

  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    /** @type {Record<string, string>} */
    const found = {};
    if (!name.trim()) found.name = 'Enter a name, e.g. the program that will use the key.';
    if (!groups.length) found.groups = 'Choose at least one group: they decide what the key may do.';
    const expiry = expiryProblem(expires);
    if (expiry) found.expires_at = expiry;
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) return;
    setBusy(true);
    try {
      const created = /** @type {CreatedKey} */ (await api.post('/api/api-keys', { name: name.trim(), groups, ...(expires ? { expires_at: expires } : {}) }, {}));
      onCreated({ ...created, name: name.trim() });
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
    <button type="submit" form="ff-api-key-form" class="ff-button ff-button-primary" disabled=${busy}>${busy ? 'Creating…' : 'Create key'}</button>`;

  return html`<${Dialog} title="New API key" onClose=${onClose} footer=${footer} busy=${busy}>
    <form id="ff-api-key-form" class="ff-settings-form" onSubmit=${submit} noValidate>
      ${formError ? html`<p class="ff-error-text" role="alert">${formError}</p>` : null}
      <${SettingsField} label="Name" required error=${errors.name} hint="Shown in the key list and as the name of the key's service account."
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input" type="text" maxlength="255" autocomplete="off" ...${attrs}
          value=${name} onInput=${(/** @type {InputEvent} */ e) => setName(/** @type {HTMLInputElement} */ (e.target).value)} />`} />
      <fieldset class="ff-settings-choices" aria-invalid=${errors.groups ? 'true' : undefined}
        aria-describedby=${errors.groups ? 'ff-api-key-groups-error' : 'ff-api-key-groups-hint'}>
        <legend class="ff-label">Groups<span class="ff-settings-required" aria-hidden="true"> *</span></legend>
        <p id="ff-api-key-groups-hint" class="ff-settings-hint">The key acts as a service account in these groups.</p>
        ${choices === null
          ? html`<p class="ff-settings-hint" role="status">Loading groups…</p>`
          : html`<ul class="ff-settings-choice-list">
            ${choices.map((g) => html`<li key=${g.identifier}>
              <label class="ff-settings-choice">
                <input type="checkbox" checked=${groups.includes(/** @type {string} */ (g.identifier))}
                  onChange=${(/** @type {Event} */ e) => toggle(/** @type {string} */ (g.identifier), /** @type {HTMLInputElement} */ (e.target).checked)} />
                <span>${g.name}</span>
                <span class="ff-settings-choice__id">${g.identifier}</span>
              </label>
            </li>`)}
          </ul>`}
        ${errors.groups ? html`<p id="ff-api-key-groups-error" class="ff-error-text">${errors.groups}</p>` : null}
      </fieldset>
      <${SettingsField} label="Expiry date" error=${errors.expires_at}
        hint="The key stops working on this date (00:00 UTC). Leave empty for a key that never expires."
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input" type="date" min=${earliestExpiry()} ...${attrs}
          value=${expires} onInput=${(/** @type {InputEvent} */ e) => setExpires(/** @type {HTMLInputElement} */ (e.target).value)} />`} />
    </form>
  <//>`;
}
