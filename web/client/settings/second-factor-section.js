/**
 * Two-factor authentication for the signed-in person (spec §5; `/auth/2fa/*`). Turning it on:
 * the server makes a secret (`setup`), shown as a QR code (and as text, for apps that cannot
 * scan); a code from the app, typed in a `PinInput`, proves it was taken (`enable`); then the ten
 * backup codes are shown — once — to copy or download. Turning it off asks for a current code or
 * a backup code (`disable`). An administrator can also reset it from the Users screen.
 */
import { html } from '../../lib/html.js';
import { useState } from 'preact/hooks';
import { PinInput } from '../../components/pin-input.js';
import { api, saveBlob } from '../api.js';
import { CopyButton } from './copy-button.js';
import { refusalOf } from './field-error.js';
import { SettingsField } from './settings-field.js';

/** @typedef {{secret: string, otpauth_uri: string, qr_svg: string}} Enrolment */

/** The key as an app shows it: groups of four. @param {string} secret */
function grouped(secret) {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

/** @param {{enabled: boolean, onChange: (enabled: boolean) => void}} props */
export function SecondFactorSection({ enabled, onChange }) {
  const [step, setStep] = useState(/** @type {'idle' | 'enrolling' | 'codes' | 'disabling'} */ ('idle'));
  const [enrolment, setEnrolment] = useState(/** @type {Enrolment | null} */ (null));
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState(/** @type {string[]} */ ([]));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);

  const reset = () => {
    setStep('idle');
    setEnrolment(null);
    setCode('');
    setError(null);
  };

  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      setEnrolment(/** @type {Enrolment} */ (await api.post('/auth/2fa/setup', {}, {})));
      setCode('');
      setStep('enrolling');
    } catch (err) {
      setError(refusalOf(err, []).message);
    } finally {
      setBusy(false);
    }
  };

  /** @param {string} [entered] */
  const confirm = async (entered = code) => {
    if (busy) return;
    if (entered.length !== 6) {
      setError('Enter the 6-digit code your authenticator app shows now.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const answer = /** @type {{backup_codes: string[]}} */ (await api.post('/auth/2fa/enable', { code: entered }, {}));
      setCodes(answer.backup_codes);
      setEnrolment(null);
      setStep('codes');
      onChange(true);
    } catch (err) {
      setError(refusalOf(err, ['code'], 'code').message);
      setCode('');
    } finally {
      setBusy(false);
    }
  };

  /** @param {Event} event */
  const disable = async (event) => {
    event.preventDefault();
    if (!code.trim()) {
      setError('Enter a code from your authenticator app, or one of your backup codes.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.post('/auth/2fa/disable', { code: code.trim() }, {});
      window.fieldforge?.toast.show({ type: 'success', message: 'Two-factor authentication is off.' });
      reset();
      onChange(false);
    } catch (err) {
      setError(refusalOf(err, ['code'], 'code').message);
    } finally {
      setBusy(false);
    }
  };

  const codesText = codes.join('\n');
  const download = () => saveBlob(new Blob([`FieldForge backup codes\n\n${codesText}\n`], { type: 'text/plain' }), 'fieldforge-backup-codes.txt');

  let body;
  if (step === 'codes') {
    body = html`<div class="ff-2fa-codes">
      <p class="ff-settings-warning" id="ff-2fa-codes-warning"><strong>Shown only once.</strong> Keep these backup codes somewhere safe.
        Each one signs you in once if your authenticator app is not at hand.</p>
      <ul class="ff-2fa-codes__list" aria-label="Backup codes" aria-describedby="ff-2fa-codes-warning">
        ${codes.map((c) => html`<li key=${c}><code>${c}</code></li>`)}
      </ul>
      <div class="ff-settings-form__actions">
        <${CopyButton} text=${codesText} what="Backup codes" label="Copy codes" />
        <button type="button" class="ff-button" onClick=${download}>Download</button>
        <button type="button" class="ff-button ff-button-primary" onClick=${() => { setCodes([]); reset(); }}>I have saved them</button>
      </div>
    </div>`;
  } else if (step === 'enrolling' && enrolment) {
    const qr = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(enrolment.qr_svg)}`;
    body = html`<ol class="ff-2fa-steps">
      <li>
        <p>Scan this QR code with an authenticator app (for example FreeOTP, Aegis, Google Authenticator or 1Password).</p>
        <img class="ff-2fa-qr" src=${qr} width="200" height="200" alt="QR code to scan with your authenticator app" />
        <p class="ff-settings-hint">Cannot scan it? Enter this key in the app instead:</p>
        <div class="ff-settings-command"><code aria-label="Setup key">${grouped(enrolment.secret)}</code>
          <${CopyButton} text=${enrolment.secret} what="Setup key" label="Copy key" /></div>
      </li>
      <li>
        <form class="ff-settings-form" onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); void confirm(); }}>
          <${PinInput} id="ff-2fa-code" label="Enter the 6-digit code the app shows" length=${6} value=${code} disabled=${busy}
            onInput=${(/** @type {string} */ next) => { setCode(next); setError(null); }} onComplete=${(/** @type {string} */ entered) => void confirm(entered)} />
          ${error ? html`<p class="ff-error-text" role="alert">${error}</p>` : null}
          <div class="ff-settings-form__actions">
            <button type="submit" class="ff-button ff-button-primary" disabled=${busy}>${busy ? 'Checking…' : 'Turn on'}</button>
            <button type="button" class="ff-button" onClick=${reset} disabled=${busy}>Cancel</button>
          </div>
        </form>
      </li>
    </ol>`;
  } else if (step === 'disabling') {
    body = html`<form class="ff-settings-form" onSubmit=${disable} noValidate>
      <${SettingsField} label="Code from your authenticator app, or a backup code" required error=${error}
        control=${(/** @type {any} */ attrs) => html`<input class="ff-input ff-2fa-disable-code" type="text" autocomplete="one-time-code" spellcheck=${false}
          autofocus ...${attrs} value=${code} onInput=${(/** @type {InputEvent} */ e) => setCode(/** @type {HTMLInputElement} */ (e.target).value)} />`} />
      <div class="ff-settings-form__actions">
        <button type="submit" class="ff-button ff-button-danger" disabled=${busy}>${busy ? 'Turning off…' : 'Turn off'}</button>
        <button type="button" class="ff-button" onClick=${reset} disabled=${busy}>Cancel</button>
      </div>
    </form>`;
  } else if (enabled) {
    body = html`<div class="ff-settings-form__actions">
      <button type="button" class="ff-button" onClick=${() => { setCode(''); setError(null); setStep('disabling'); }}>Turn off two-factor authentication</button>
    </div>`;
  } else {
    body = html`<div>
      ${error ? html`<p class="ff-error-text" role="alert">${error}</p>` : null}
      <div class="ff-settings-form__actions">
        <button type="button" class="ff-button ff-button-primary" onClick=${start} disabled=${busy}>${busy ? 'Preparing…' : 'Set up two-factor authentication'}</button>
      </div>
    </div>`;
  }

  return html`<section class="ff-settings-section" aria-labelledby="ff-profile-2fa">
    <h2 class="ff-settings-section__title" id="ff-profile-2fa">Two-factor authentication</h2>
    <p>
      ${enabled ? html`<span class="ff-badge ff-badge-success">On</span>` : html`<span class="ff-badge">Off</span>`}
      ${' '}${enabled
        ? 'Signing in asks for a code from your authenticator app after your password.'
        : 'Protect your account with a code from an authenticator app on your phone, asked after your password.'}
    </p>
    ${body}
  </section>`;
}
