/**
 * Changing one's own password (`POST /auth/password`): the current one, the new one twice. The
 * rule is said up front and checked here where it can be (length, the two entries agreeing); the
 * server checks the rest (not the e-mail, not a common password) and its refusal is shown at the
 * input it is about. Other sessions of the person end; this one goes on.
 */
import { html } from '../../lib/html.js';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { refusalOf } from './field-error.js';
import { SettingsField } from './settings-field.js';

/** Matches the server's rule (src/auth/password-rule.ts): length in characters (code points). */
const MIN_LENGTH = 12;
const RULE = `At least ${MIN_LENGTH} characters. Not your e-mail address, and not a common password. A few unrelated words make a strong one.`;

export function PasswordSection() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [errors, setErrors] = useState(/** @type {Record<string, string>} */ ({}));
  const [busy, setBusy] = useState(false);

  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    /** @type {Record<string, string>} */
    const found = {};
    if (!current) found.current_password = 'Enter your current password.';
    if ([...next].length < MIN_LENGTH) found.new_password = `Password must be at least ${MIN_LENGTH} characters long.`;
    else if (repeat !== next) found.repeat = 'The two new passwords differ.';
    setErrors(found);
    if (Object.keys(found).length) return;
    setBusy(true);
    try {
      const answer = /** @type {{other_sessions_revoked: number}} */ (await api.post('/auth/password', { current_password: current, new_password: next }, {}));
      setCurrent('');
      setNext('');
      setRepeat('');
      const others = answer.other_sessions_revoked;
      window.fieldforge?.toast.show({ type: 'success', message: `Password changed.${others ? ` You were signed out of ${others === 1 ? '1 other session' : `${others} other sessions`}.` : ''}` });
    } catch (err) {
      const { field, message } = refusalOf(err, ['current_password', 'new_password'], 'new_password');
      // "The current password is not correct." names no field on a server that does not send one.
      const at = field === 'new_password' && /current password/i.test(message) ? 'current_password' : field;
      setErrors(at ? { [at]: message } : { form: message });
    } finally {
      setBusy(false);
    }
  };

  /** @param {(value: string) => void} set */
  const typed = (set) => (/** @type {InputEvent} */ e) => set(/** @type {HTMLInputElement} */ (e.target).value);
  return html`<section class="ff-settings-section" aria-labelledby="ff-profile-password">
    <h2 class="ff-settings-section__title" id="ff-profile-password">Password</h2>
    <form class="ff-settings-form" onSubmit=${submit} noValidate>
      ${errors.form ? html`<p class="ff-error-text" role="alert">${errors.form}</p>` : null}
      <${SettingsField} label="Current password" required error=${errors.current_password}
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input" type="password" autocomplete="current-password" ...${attrs}
          value=${current} onInput=${typed(setCurrent)} />`} />
      <${SettingsField} label="New password" required error=${errors.new_password} hint=${RULE}
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input" type="password" autocomplete="new-password" ...${attrs}
          value=${next} onInput=${typed(setNext)} />`} />
      <${SettingsField} label="Confirm password" required error=${errors.repeat}
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input" type="password" autocomplete="new-password" ...${attrs}
          value=${repeat} onInput=${typed(setRepeat)} />`} />
      <div class="ff-settings-form__actions">
        <button type="submit" class="ff-button ff-button-primary" disabled=${busy}>${busy ? 'Changing…' : 'Change password'}</button>
      </div>
    </form>
  </section>`;
}
