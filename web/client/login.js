/**
 * Entry of the sign-in page (`/web/login`, CONTRACTS C2): the database choice when nothing else
 * made it, then e-mail, password and the `Altcha` proof of work, "Sign in"; a second factor
 * continues here with a `PinInput` (or a backup code). The session comes back as HttpOnly cookies
 * (`cookie: true`), then the browser goes to `?next=` (a path of this site only) or the shell.
 * Errors are said in place, in an alert. A browser already signed in (or whose refresh cookie
 * still holds) goes straight on.
 */
import { html, render } from '../lib/html.js';
import { useRef, useState } from 'preact/hooks';
import { Altcha } from '../components/altcha.js';
import { PinInput } from '../components/pin-input.js';
import { api, ApiError } from './api.js';
import { renewSession } from './shell/session.js';
import { safeNextPath } from './shell/next-path.js';

/** @typedef {{db: string | null, db_source: string | null, databases: string[] | null, refused: string | null}} PageData */

const root = /** @type {HTMLElement} */ (document.getElementById('app'));
/** @type {PageData} */
const page = JSON.parse(root.dataset.page || '{}');
const params = new URLSearchParams(location.search);
const rawNext = params.get('next');
const next = safeNextPath(rawNext);

/** @param {unknown} err */
function messageOf(err) {
  if (err instanceof ApiError) return err.detail;
  return err instanceof Error ? err.message : String(err);
}

/** @param {{children: unknown, title: string}} props */
function Card({ children, title }) {
  return html`<main class="ff-login">
    <div class="ff-login__card">
      <p class="ff-login__brand" aria-hidden="true">FieldForge</p>
      <h1 class="ff-login__title">${title}</h1>
      ${children}
    </div>
  </main>`;
}

/** Which database to sign in to: a list when the server gives one, else a name to type. */
function DatabaseChoice() {
  const { databases, refused } = page;
  return html`<${Card} title="Choose a database">
    <form class="ff-login__form" method="get" action="/web/login">
      ${refused ? html`<p class="ff-error-text" role="alert">There is no database named “${refused}”.</p>` : null}
      <div class="ff-field">
        <label class="ff-label" for="ff-login-db">Database</label>
        ${databases
          ? html`<select id="ff-login-db" class="ff-input" name="db" required>
              ${databases.map((name) => html`<option value=${name}>${name}</option>`)}
            </select>`
          : html`<input id="ff-login-db" class="ff-input" name="db" required autocomplete="off" spellcheck=${false} />`}
      </div>
      ${rawNext ? html`<input type="hidden" name="next" value=${rawNext} />` : null}
      <button type="submit" class="ff-button ff-button-primary ff-login__submit">Continue</button>
    </form>
  <//>`;
}

/** @param {{onSecondFactor: (pending: {token: string, email: string}) => void, email: string, notice: string}} props */
function PasswordStep({ onSecondFactor, email: initialEmail, notice }) {
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [error, setError] = useState(notice);
  const [busy, setBusy] = useState(false);
  const passwordInput = useRef(/** @type {HTMLInputElement | null} */ (null));

  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    if (busy) return;
    const form = /** @type {HTMLFormElement} */ (event.currentTarget);
    const altcha = /** @type {HTMLInputElement | null} */ (form.elements.namedItem('altcha'))?.value ?? '';
    setBusy(true);
    setError('');
    try {
      const answer = /** @type {Record<string, unknown>} */ (await api.post('/auth/authenticate', { email, password, altcha, cookie: true }, { quiet401: true }));
      if (answer['2fa_required']) {
        onSecondFactor({ token: String(answer.pending_token), email });
        return;
      }
      location.assign(next);
    } catch (err) {
      setError(messageOf(err));
      setPassword('');
      setBusy(false);
      passwordInput.current?.focus();
    }
  };

  const switchDb = page.db && (page.db_source === 'query' || page.db_source === 'cookie')
    ? html`<p class="ff-login__db">Database <strong>${page.db}</strong> · <a href=${`/web/login?db=${rawNext ? `&next=${encodeURIComponent(rawNext)}` : ''}`}>Change</a></p>`
    : null;

  return html`<${Card} title="Sign in">
    ${switchDb}
    <form class="ff-login__form" onSubmit=${submit} aria-busy=${busy ? 'true' : undefined} novalidate=${false}>
      <div class="ff-field">
        <label class="ff-label" for="ff-login-email">E-mail</label>
        <input id="ff-login-email" class="ff-input" type="email" name="email" autocomplete="username" required autofocus=${!initialEmail}
          value=${email} onInput=${(/** @type {InputEvent} */ e) => setEmail(/** @type {HTMLInputElement} */ (e.currentTarget).value)} />
      </div>
      <div class="ff-field">
        <label class="ff-label" for="ff-login-password">Password</label>
        <input id="ff-login-password" ref=${passwordInput} class="ff-input" type="password" name="password" autocomplete="current-password" required
          autofocus=${Boolean(initialEmail)}
          value=${password} onInput=${(/** @type {InputEvent} */ e) => setPassword(/** @type {HTMLInputElement} */ (e.currentTarget).value)} />
      </div>
      <${Altcha} name="altcha" />
      ${error ? html`<p class="ff-error-text ff-login__error" role="alert">${error}</p>` : null}
      <button type="submit" class="ff-button ff-button-primary ff-login__submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  <//>`;
}

/**
 * The second factor: the authenticator's six digits (sent as soon as they are all there), or a
 * backup code. The server spends the sign-in on every try, so a wrong code means signing in again.
 * @param {{pending: {token: string, email: string}, onRestart: (notice: string) => void}} props
 */
function SecondFactorStep({ pending, onRestart }) {
  const [backup, setBackup] = useState(false);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);

  /** @param {string} entered */
  const verify = async (entered) => {
    if (busy || !entered.trim()) return;
    setBusy(true);
    try {
      await api.post('/auth/2fa/verify', { pending_token: pending.token, code: entered.trim(), cookie: true }, { quiet401: true });
      location.assign(next);
    } catch (err) {
      onRestart(err instanceof ApiError && err.status === 401
        ? 'That code was not accepted (wrong, already used, or the sign-in expired). Sign in again to try another.'
        : messageOf(err));
    }
  };

  /** @param {SubmitEvent} event */
  const submit = (event) => {
    event.preventDefault();
    void verify(code);
  };

  return html`<${Card} title="Two-step verification">
    <form class="ff-login__form" onSubmit=${submit} aria-busy=${busy ? 'true' : undefined}>
      ${backup
        ? html`<div class="ff-field">
            <label class="ff-label" for="ff-login-backup">Backup code</label>
            <input id="ff-login-backup" class="ff-input" name="backup_code" autocomplete="off" spellcheck=${false} autofocus required
              placeholder="XXXX-XXXX" value=${code} onInput=${(/** @type {InputEvent} */ e) => setCode(/** @type {HTMLInputElement} */ (e.currentTarget).value)} />
            <p class="ff-login__hint">One of the codes you saved when you turned on two-step verification. Each works once.</p>
          </div>`
        : html`<div class="ff-field">
            <p class="ff-login__hint" id="ff-login-totp-hint">Enter the 6-digit code from your authenticator app.</p>
            <${PinInput} id="ff-login-totp" label="Authentication code" length=${6} value=${code} disabled=${busy}
              onInput=${setCode} onComplete=${(/** @type {string} */ entered) => void verify(entered)} />
          </div>`}
      <button type="submit" class="ff-button ff-button-primary ff-login__submit" disabled=${busy}>Verify</button>
      <button type="button" class="ff-link-button" onClick=${() => { setBackup(!backup); setCode(''); }}>
        ${backup ? 'Use the authenticator app instead' : 'Use a backup code instead'}
      </button>
      <button type="button" class="ff-link-button" onClick=${() => onRestart('')}>Back to sign in</button>
    </form>
  <//>`;
}

function SignIn() {
  const [pending, setPending] = useState(/** @type {{token: string, email: string} | null} */ (null));
  const [restart, setRestart] = useState({ round: 0, email: '', notice: '' });
  if (pending) {
    return html`<${SecondFactorStep} pending=${pending} onRestart=${(/** @type {string} */ notice) => {
      setRestart({ round: restart.round + 1, email: pending.email, notice });
      setPending(null);
    }} />`;
  }
  return html`<${PasswordStep} key=${restart.round} email=${restart.email} notice=${restart.notice} onSecondFactor=${setPending} />`;
}

/**
 * Already signed in, or the refresh cookie still holds: no need to sign in again. Only asked when
 * the readable CSRF cookie says a session was opened in this browser (sign-out clears it).
 */
async function alreadySignedIn() {
  if (!document.cookie.split(';').some((c) => c.trim().startsWith('ff_csrf='))) return false;
  try {
    await api.get('/auth/me', { quiet401: true });
    return true;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401) return false;
  }
  return renewSession().catch(() => false);
}

async function start() {
  if (page.db === null) {
    render(html`<${DatabaseChoice} />`, root);
    return;
  }
  if (await alreadySignedIn()) {
    location.replace(next);
    return;
  }
  render(html`<${SignIn} />`, root);
}

void start();
