/**
 * My profile's `Notifications` section (CONTRACTS C5 precision 3): how the person hears of new
 * messages — `realtime` (in the app, live, and as push notifications) or `inbox` (only in the
 * bell's feed) — saved with `User.set_my_notification_preference`, and this browser's push
 * opt-in. Not shown in a database without the messaging module (the bell's count says whether
 * there is one, so no request is made for a field that does not exist).
 */
import { html } from '../../lib/html.js';
import { useEffect, useId, useState } from 'preact/hooks';
import { api, readAction } from '../api.js';
import { setNotificationPreference } from './message-toasts.js';
import { PushToggle } from './push-toggle.js';
import { useUnreadCount } from './unread-count.js';
import './stylesheet.js';

const CHOICES = /** @type {const} */ ([
  ['realtime', 'In the app and as push notifications'],
  ['inbox', 'Only in the inbox'],
]);

/** @param {{userId: number}} props */
export function NotificationSettings({ userId }) {
  const base = `ff-notify-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const [saved, setSaved] = useState(/** @type {string | null | undefined} */ (undefined));
  // Nothing is checked until the saved choice is read: a default shown first would be a claim
  // the page cannot yet make (and a click on it would be lost when the answer lands).
  const [value, setValue] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));

  const { available } = useUnreadCount();

  useEffect(() => {
    if (!available) return;
    api.fetchRecord('User', userId, { fields: ['notification_preference'] }, { quiet401: true }).then(
      (row) => {
        const pref = /** @type {{notification_preference?: string | null}} */ (row).notification_preference || 'realtime';
        setSaved(pref);
        setValue(pref);
      },
      () => setSaved(null), // no such field: no messaging in this database
    );
  }, [userId, available]);

  if (!available || saved === null) return null;

  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { result } = await readAction(await api.execute('User', 'set_my_notification_preference', { request_body: { inputs: { notification_preference: value } } }));
      const chosen = /** @type {{notification_preference?: string}} */ (result)?.notification_preference ?? value;
      setSaved(chosen);
      setValue(chosen);
      setNotificationPreference(chosen);
      window.fieldforge?.toast.show({ type: 'success', message: 'Notification preference saved.' });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return html`<section class="ff-settings-section" aria-labelledby=${`${base}-title`}>
    <h2 class="ff-settings-section__title" id=${`${base}-title`}>Notifications</h2>
    <form class="ff-settings-form" onSubmit=${submit}>
      <div class="ff-field">
        <span class="ff-label" id=${`${base}-label`}>Notification preference</span>
        <div class="ff-radio-group" role="radiogroup" aria-labelledby=${`${base}-label`} aria-describedby=${error ? `${base}-error` : `${base}-hint`}>
          ${CHOICES.map(([key, label]) => html`<label class="ff-radio" key=${key}>
            <input type="radio" name=${`${base}-pref`} value=${key} checked=${value === key} disabled=${saved === undefined}
              onChange=${() => setValue(key)} />
            <span>${label}</span>
          </label>`)}
        </div>
        <p class="ff-settings-hint" id=${`${base}-hint`}>New messages on the records you follow, and mentions of you, always reach the bell’s inbox.</p>
        ${error ? html`<p class="ff-error-text" id=${`${base}-error`} role="alert">${error}</p>` : null}
      </div>
      <div class="ff-settings-form__actions">
        <button type="submit" class="ff-button ff-button-primary" disabled=${busy || saved === undefined || value === saved}>
          ${busy ? 'Saving…' : 'Save notification preference'}</button>
      </div>
    </form>
    <${PushToggle} />
  </section>`;
}
