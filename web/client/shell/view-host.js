/**
 * Opens the action of the address and renders its view (CONTRACTS C2): the list, the form, or
 * the client screen the action names, with the contract's props. Says so in place when the action
 * cannot be opened (no right, not found, server down) or its view's code is not available.
 */
import { html, h } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { loadAction, loadViewModule } from './view-loader.js';

/** @typedef {import('./view-loader.js').LoadedAction} LoadedAction */

/**
 * Which view of `action` the address asks for: `list` or `form`, else the action's default; a
 * kind the action has no mode of gives the default too.
 * @param {import('./view-loader.js').WindowAction} action @param {Record<string, string>} route
 * @returns {'list' | 'form'}
 */
export function viewKind(action, route) {
  const modes = action.modes.map((m) => m.toLowerCase());
  const asked = route.view === 'form' || route.view === 'list' ? route.view : null;
  if (asked && (modes.includes(asked) || (asked === 'form' && route.id))) return asked;
  const fallback = (action.default_view || 'List').toLowerCase();
  return fallback === 'form' ? 'form' : 'list';
}

/**
 * @param {{route: Record<string, string>, navigate: (params: Record<string, unknown>, options?: {replace?: boolean}) => Promise<boolean>,
 *   session: import('./session.js').Session, onLoaded: (loaded: LoadedAction | null) => void}} props
 */
export function ViewHost({ route, navigate, session, onLoaded }) {
  const ref = route.action;
  const [state, setState] = useState(/** @type {{ref: string, loaded?: LoadedAction, error?: string}} */ ({ ref }));
  const [component, setComponent] = useState(/** @type {{key: string, fn?: any, error?: string} | null} */ (null));

  useEffect(() => {
    let live = true;
    setState({ ref });
    loadAction(ref).then(
      (loaded) => { if (live) { setState({ ref, loaded }); onLoaded(loaded); } },
      (err) => { if (live) { setState({ ref, error: describe(err) }); onLoaded(null); } },
    );
    return () => { live = false; };
  }, [ref]);

  const loaded = state.ref === ref ? state.loaded : undefined;
  const clientView = loaded?.action.client_view ?? null;
  const kind = loaded ? (clientView ? 'screens' : viewKind(loaded.action, route)) : null;
  const componentKey = kind ? `${kind}:${clientView ?? ''}` : '';

  useEffect(() => {
    if (!kind) return undefined;
    let live = true;
    loadViewModule(kind).then(
      (exported) => {
        if (!live) return;
        const fn = kind === 'screens' ? exported[/** @type {string} */ (clientView)] : exported;
        setComponent(fn ? { key: componentKey, fn } : { key: componentKey, error: `There is no screen named “${clientView}”.` });
      },
      () => { if (live) setComponent({ key: componentKey, error: 'This view is not available in this version of the client.' }); },
    );
    return () => { live = false; };
  }, [componentKey]);

  if (state.ref === ref && state.error) return html`<${Problem} title="This page cannot be opened" message=${state.error} />`;
  if (!loaded || !component || component.key !== componentKey) return html`<p class="ff-view-loading" role="status">Loading…</p>`;
  if (component.error) return html`<${Problem} title="This view is not available" message=${component.error} />`;

  const view = kind === 'form' ? 'form' : kind === 'list' ? 'list' : clientView;
  const key = `${ref}:${view}:${kind === 'form' ? route.id ?? 'new' : ''}`;
  return h(component.fn, {
    key,
    action: loaded.action,
    views: loaded.views,
    registry: loaded.registry,
    modelInfo: loaded.modelInfo,
    route,
    navigate,
    session,
  });
}

/** @param {{title: string, message: string}} props */
function Problem({ title, message }) {
  return html`<section class="ff-view-problem" role="alert">
    <h1 class="ff-view-problem__title">${title}</h1>
    <p>${message}</p>
  </section>`;
}

/** @param {unknown} err */
function describe(err) {
  if (err instanceof ApiError) {
    if (err.status === 404) return 'This menu or record no longer exists. Choose another one from the menu.';
    return err.detail;
  }
  return err instanceof Error ? err.message : String(err);
}
