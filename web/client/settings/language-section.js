/**
 * The person's language (labels, menus and formats): one of the database's active languages, or
 * the default (English). Saved with `User.set_my_language`, which needs no right on other users.
 * The shell reads the language once per page, so after saving the screen offers to reload.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { api, readAction } from '../api.js';
import { refusalOf } from './field-error.js';
import { SettingsField } from './settings-field.js';

/** @typedef {{id: number, code: string, name: string}} LanguageRow */

/** @param {{lang: string | null, onSaved: (lang: string | null) => void}} props */
export function LanguageSection({ lang, onSaved }) {
  const [languages, setLanguages] = useState(/** @type {LanguageRow[] | null} */ (null));
  const [value, setValue] = useState(lang ?? '');
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    api.query('Language', { fields: ['code', 'name'], order_by: ['name ASC'], limit: 500 }).then(
      (answer) => setLanguages(/** @type {LanguageRow[]} */ (Array.isArray(answer) ? answer : answer.data ?? [])),
      (err) => setError(`The languages cannot be loaded: ${err.message}`),
    );
  }, []);

  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { result } = await readAction(await api.execute('User', 'set_my_language', { request_body: { inputs: { lang: value || null } } }));
      const chosen = /** @type {{lang: string | null}} */ (result)?.lang ?? null;
      setSaved(true);
      onSaved(chosen);
      window.fieldforge?.toast.show({ type: 'success', message: 'Language saved.' });
    } catch (err) {
      setError(refusalOf(err, ['lang'], 'lang').message);
    } finally {
      setBusy(false);
    }
  };

  const listed = languages ?? [];
  // A language deactivated since it was chosen stays the person's, shown as such.
  const missing = value && languages && !listed.some((l) => l.code === value);
  return html`<section class="ff-settings-section" aria-labelledby="ff-profile-language">
    <h2 class="ff-settings-section__title" id="ff-profile-language">Preferences</h2>
    <form class="ff-settings-form" onSubmit=${submit}>
      <${SettingsField} label="Language" error=${error} hint="Labels, menus, dates and numbers appear in this language."
        control=${(/** @type {any} */ attrs) => html`<select class="ff-input" ...${attrs} value=${value} disabled=${languages === null}
          onChange=${(/** @type {Event} */ e) => { setValue(/** @type {HTMLSelectElement} */ (e.target).value); setSaved(false); }}>
          <option value="">English (default)</option>
          ${listed.filter((l) => l.code !== 'en').map((l) => html`<option value=${l.code} key=${l.code}>${l.name} (${l.code})</option>`)}
          ${missing ? html`<option value=${value}>${value} (no longer active)</option>` : null}
        </select>`} />
      <div class="ff-settings-form__actions">
        <button type="submit" class="ff-button ff-button-primary" disabled=${busy || languages === null}>${busy ? 'Saving…' : 'Save language'}</button>
        ${saved ? html`<span class="ff-settings-saved">Saved. <button type="button" class="ff-button" onClick=${() => location.reload()}>Reload</button> to see the whole page in it.</span>` : null}
      </div>
    </form>
  </section>`;
}
