/**
 * What opening an action takes (CONTRACTS C2): the window action with its views' arches, the
 * model's registry and model info, fetched together and kept for the page's life (a list and the
 * form of the same action share them). The views' code is loaded on first use, by URL: a view
 * whose module is missing or broken is reported as unavailable instead of breaking the shell.
 */
import { api } from '../api.js';

/**
 * @typedef {object} WindowAction
 * @property {number} id
 * @property {string | null} identifier
 * @property {string} name
 * @property {string} model
 * @property {string[]} modes
 * @property {string} default_view
 * @property {string | null} client_view
 * @property {{List?: unknown[], Form?: unknown[]}} views
 */

/** @typedef {{action: WindowAction, views: {List?: unknown[], Form?: unknown[]}, registry: Record<string, any>, modelInfo: Record<string, any>}} LoadedAction */

/** @type {Map<string, Promise<LoadedAction>>} */
const actions = new Map();

/** @param {string} ref an action identifier or id @returns {Promise<LoadedAction>} */
export function loadAction(ref) {
  let found = actions.get(ref);
  if (!found) {
    found = (async () => {
      const action = /** @type {WindowAction} */ (await api.get(`/api/window-action/${encodeURIComponent(ref)}`, {}));
      const model = encodeURIComponent(action.model);
      // A client screen may stand on a model the generic views never read; both are cheap anyway.
      const [registry, modelInfo] = await Promise.all([api.get(`/api/get_registry/${model}`, {}), api.get(`/api/model-info/${model}`, {})]);
      return { action, views: action.views ?? {}, registry, modelInfo };
    })();
    actions.set(ref, found);
    found.catch(() => actions.delete(ref)); // a failure is tried again on the next visit
  }
  return found;
}

const MODULES = {
  list: { url: new URL('../views/list-view.js', import.meta.url).href, name: 'ListView' },
  form: { url: new URL('../views/form-view.js', import.meta.url).href, name: 'FormView' },
  screens: { url: new URL('../settings/screens.js', import.meta.url).href, name: 'SCREENS' },
};

/** @type {Map<string, Promise<any>>} */
const modules = new Map();

/**
 * The export a view kind lives in (`ListView`, `FormView`, `SCREENS`); rejects when its module
 * cannot be loaded.
 * @param {'list' | 'form' | 'screens'} kind
 * @returns {Promise<any>}
 */
export function loadViewModule(kind) {
  let found = modules.get(kind);
  if (!found) {
    const { url, name } = MODULES[kind];
    found = import(/* @vite-ignore */ url).then((module) => {
      if (!module[name]) throw new Error(`${url} exports no ${name}`);
      return module[name];
    });
    modules.set(kind, found);
    found.catch((err) => {
      modules.delete(kind);
      console.warn(`FieldForge: the ${kind} view could not be loaded`, err);
    });
  }
  return found;
}
