/**
 * Entry of the app shell page (`/web`): who is signed in (else to the sign-in page and back), the
 * page's language and direction from the user's, the menus and the installed modules' own web
 * assets (their widgets), then the shell.
 */
import { html, render } from '../lib/html.js';
import { api } from './api.js';
import { loadLanguage } from './format.js';
import { loadModuleAssets } from './module-assets.js';
import { AppShell } from './shell/app-shell.js';
import { followPresence } from './realtime/presence.js';
import { showNotifications, showSocketRefusals } from './realtime/live.js';
import { showMessageToasts } from './messaging/message-toasts.js';
import { followUnreadCount } from './messaging/unread-count.js';
import { startRealtime } from './realtime/socket.js';
import { goToSignIn, handleExpiredSessions, loadSession, renewSession, signInUrl } from './shell/session.js';

const root = /** @type {HTMLElement} */ (document.getElementById('app'));

async function start() {
  const session = await loadSession();
  if (!session) {
    location.replace(signInUrl());
    return;
  }
  document.documentElement.lang = session.lang;
  document.documentElement.dir = session.user.language.direction === 'rtl' ? 'rtl' : 'ltr';
  handleExpiredSessions();
  startLiveUpdates(session.db, session.user.id);
  // The language's own formats (separators, date format) for every view and the modules'
  // widgets, loaded with the menus.
  const [menus] = await Promise.all([
    /** @type {Promise<import('./shell/menu-tree.js').MenuNode[]>} */ (api.get('/api/menus', {})),
    loadLanguage(session.lang),
    loadModuleAssets(),
  ]);
  render(html`<${AppShell} session=${session} menus=${menus} />`, root);
}

/**
 * The tab's realtime socket, once signed in (CONTRACTS C4): notifications as toasts, presence,
 * the bell's unread count and a toast per new message (C5).
 * Closed with 4001 (signed out elsewhere, session revoked): renewed once if the refresh cookie
 * still works, else the sign-in page, which brings the person back here.
 * @param {string} db @param {number} userId
 */
function startLiveUpdates(db, userId) {
  showNotifications();
  showSocketRefusals();
  followPresence();
  followUnreadCount();
  showMessageToasts(userId);
  connect(db);
}

/** @param {string} db */
function connect(db) {
  startRealtime({
    db,
    onRevoked: () => {
      void renewSession().catch(() => false).then((renewed) => {
        if (renewed) connect(db);
        else goToSignIn();
      });
    },
    // The socket could not open: an expired access cookie is renewed; no session at all → sign in.
    onOpenFailed: async () => {
      const session = await loadSession();
      if (session) return true;
      goToSignIn();
      return false;
    },
  });
}

start().catch((err) => {
  console.error('FieldForge: the application could not start', err);
  render(html`<main class="ff-start-failure" role="alert">
    <h1>FieldForge could not start</h1>
    <p>${err instanceof Error ? err.message : String(err)}</p>
    <p><a href="/web">Try again</a> · <a href="/web/login">Sign in</a></p>
  </main>`, root);
});
