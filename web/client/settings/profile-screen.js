/**
 * My profile: the signed-in person's own settings — who they are, their language, how they are
 * notified of messages (with the messaging module), their password and their second factor. Open to every user (it acts on the caller only); reached from the
 * shell's user menu (`#action=core.action_profile`).
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { NotificationSettings } from '../messaging/notification-settings.js';
import { LanguageSection } from './language-section.js';
import { PasswordSection } from './password-section.js';
import { ScreenHeader } from './screen-header.js';
import { SecondFactorSection } from './second-factor-section.js';

/** @typedef {{id: number, name: string, email: string | null, lang: string | null, totp_enabled: boolean}} Me */

/** @param {{session: {user: {id: number}}}} props */
export function ProfileScreen({ session }) {
  const [me, setMe] = useState(/** @type {Me | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));

  useEffect(() => {
    api.fetchRecord('User', session.user.id, { fields: ['name', 'email', 'lang', 'totp_enabled'] }).then(
      (record) => setMe(/** @type {Me} */ (record)),
      (err) => setError(err.message),
    );
  }, [session.user.id]);

  return html`<section class="ff-settings-screen ff-profile" aria-labelledby="ff-profile-title">
    <${ScreenHeader} id="ff-profile-title" title="My Profile"
      intro=${me ? html`Signed in as <strong>${me.name}</strong>${me.email ? html` (${me.email})` : null}.` : null} />
    ${error ? html`<p class="ff-settings-problem" role="alert">${error}</p>` : null}
    ${!me && !error ? html`<p role="status">Loading…</p>` : null}
    ${me ? html`
      <${LanguageSection} lang=${me.lang} onSaved=${(/** @type {string | null} */ lang) => setMe({ ...me, lang })} />
      <${NotificationSettings} userId=${session.user.id} />
      <${PasswordSection} />
      <${SecondFactorSection} enabled=${me.totp_enabled} onChange=${(/** @type {boolean} */ on) => setMe({ ...me, totp_enabled: on })} />` : null}
  </section>`;
}
