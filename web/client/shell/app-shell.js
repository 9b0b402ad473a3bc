/**
 * The app shell (`/web`, CONTRACTS C2): a top bar (menu button on narrow screens, the product
 * name, the palette button, the notifications bell, the user menu), the main menu, breadcrumbs
 * and the view of the address (`#model=…&id=…` first finds the action opening that record). Every navigation — menu, palette, breadcrumb, a view's `navigate`, the browser's Back —
 * passes the unsaved-edits guard first. Ctrl+K (⌘K) opens the command palette anywhere.
 */
import { html } from '../../lib/html.js';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { confirmLeave } from '../leave-guard.js';
import { Bell } from '../messaging/bell.js';
import { RecordLinkHost } from '../messaging/record-link-host.js';
import { Breadcrumbs } from './breadcrumbs.js';
import { CommandPalette } from './command-palette.js';
import { Home } from './home.js';
import { MainMenu } from './main-menu.js';
import { actionHref, entryOfAction, menuEntries } from './menu-tree.js';
import { onRouteChange, readRoute, restoreRoute, writeRoute } from './router.js';
import { UserMenu } from './user-menu.js';
import { ViewHost } from './view-host.js';

const NAV_ID = 'ff-main-menu';

/**
 * @param {{session: import('./session.js').Session, menus: import('./menu-tree.js').MenuNode[]}} props
 */
export function AppShell({ session, menus }) {
  const [route, setRoute] = useState(readRoute);
  const [loaded, setLoaded] = useState(/** @type {import('./view-loader.js').LoadedAction | null} */ (null));
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [navOpen, setNavOpen] = useState(false);
  const entries = useMemo(() => menuEntries(menus), [menus]);

  // The browser changed the address (Back, Forward, a typed hash): ask before leaving edits.
  useEffect(() => {
    let shown = location.hash;
    return onRouteChange(async ({ external }) => {
      if (external && !(await confirmLeave())) {
        restoreRoute(shown);
        return;
      }
      shown = location.hash;
      setRoute(readRoute());
    });
  }, []);

  const navigate = useCallback(
    /** @param {Record<string, unknown>} params @param {{replace?: boolean}} [options] @returns {Promise<boolean>} */
    async (params, options = {}) => {
      if (!(await confirmLeave())) return false;
      writeRoute(params, options);
      return true;
    }, []);

  /** @param {string} action */
  const openAction = useCallback((action) => {
    setNavOpen(false);
    void navigate({ action });
  }, [navigate]);

  useEffect(() => {
    /** @param {KeyboardEvent} event */
    const keydown = (event) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        setPaletteOpen(true);
      }
    };
    document.addEventListener('keydown', keydown);
    return () => document.removeEventListener('keydown', keydown);
  }, []);

  useEffect(() => {
    if (!route.action) setLoaded(null);
  }, [route.action]);

  const entry = entryOfAction(entries, route.action);
  const action = loaded && (loaded.action.identifier === route.action || String(loaded.action.id) === route.action) ? loaded.action : null;
  const crumbs = [];
  if (route.action) {
    const trail = entry ? entry.path.slice(0, -1) : [];
    for (const name of trail) crumbs.push({ label: name });
    const actionName = action?.name ?? entry?.name ?? '';
    const inForm = route.view === 'form';
    if (actionName) {
      crumbs.push(inForm
        ? { label: actionName, href: actionHref(route.action), onOpen: () => void navigate({ action: route.action, view: 'list' }) }
        : { label: actionName });
    }
    if (inForm) crumbs.push({ label: route.id ? `#${route.id}` : 'New' });
  }

  useEffect(() => {
    const last = crumbs.length ? crumbs[crumbs.length - 1].label : '';
    const base = action?.name ?? entry?.name ?? '';
    document.title = [last !== base ? last : '', base, 'FieldForge'].filter(Boolean).join(' · ');
  });

  return html`<div class="ff-shell">
    <a class="ff-skip-link" href="#ff-content" onClick=${(/** @type {MouseEvent} */ e) => { e.preventDefault(); document.getElementById('ff-content')?.focus(); }}>Skip to content</a>
    <header class="ff-topbar">
      <button type="button" class="ff-icon-button ff-topbar__menu-toggle" aria-expanded=${navOpen ? 'true' : 'false'} aria-controls=${NAV_ID}
        aria-label="Menu" onClick=${() => setNavOpen(!navOpen)}>
        <span class="ff-hamburger" aria-hidden="true"></span>
      </button>
      <a class="ff-topbar__brand" href="/web" onClick=${(/** @type {MouseEvent} */ e) => {
        if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
        e.preventDefault();
        void navigate({});
      }}>FieldForge</a>
      <button type="button" class="ff-topbar__palette" aria-keyshortcuts="Control+K Meta+K" onClick=${() => setPaletteOpen(true)}>
        <span class="ff-topbar__palette-label">Search menus…</span><kbd aria-hidden="true">Ctrl K</kbd>
      </button>
      <${Bell} lang=${session.lang} />
      <${UserMenu} session=${session} />
    </header>
    <div class="ff-shell__body">
      <${MainMenu} id=${NAV_ID} tree=${menus} current=${route.action ?? null} onOpen=${openAction} open=${navOpen} />
      ${navOpen ? html`<div class="ff-shell__scrim" aria-hidden="true" onClick=${() => setNavOpen(false)}></div>` : null}
      <main id="ff-content" class="ff-shell__content" tabindex="-1">
        <${Breadcrumbs} crumbs=${crumbs} />
        ${route.action
          ? html`<${ViewHost} route=${route} navigate=${navigate} session=${session} onLoaded=${setLoaded} />`
          : route.model
            ? html`<${RecordLinkHost} route=${route} menuActions=${entries.map((e) => e.action)} />`
            : html`<${Home} tree=${menus} user=${session.user} onOpen=${openAction} />`}
      </main>
    </div>
    ${paletteOpen ? html`<${CommandPalette} entries=${entries}
      onClose=${() => setPaletteOpen(false)}
      onOpen=${(/** @type {import('./menu-tree.js').MenuEntry} */ e) => { setPaletteOpen(false); openAction(e.action); }} />` : null}
  </div>`;
}
