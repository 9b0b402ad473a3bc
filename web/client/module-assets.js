/**
 * A module's own web assets (CONTRACTS C2): the `web/index.js` of each module installed in the
 * database (`GET /api/web-modules`, in dependency order), imported once at start, after the
 * core widgets are registered and before the first view is drawn, so the widgets they register
 * (`registry.field`) are there when a view asks for them. A module whose assets fail to load is
 * reported on the console and left out (all of them when the list cannot be read): the rest of
 * the client still starts. The same answer names the installed modules (`installedModules`).
 */
import { api } from './api.js';
import './fields/core-widgets.js';

/** @type {Promise<{entries: string[], modules: string[]} | null> | null} */
let listing = null;

/** The installed modules' web entries and identifiers, asked once (null when they cannot be read). */
function webModules() {
  listing ??= /** @type {Promise<{entries: string[], modules: string[]}>} */ (api.get('/api/web-modules')).catch((err) => {
    console.error('FieldForge: the modules\' web assets could not be listed', err);
    return null;
  });
  return listing;
}

/** The identifiers of the modules installed in the database, or null when they cannot be read. */
export async function installedModules() {
  return (await webModules())?.modules ?? null;
}

/** Imports every installed module's web entry, one after the other (a module may build on those it depends on). */
export async function loadModuleAssets() {
  const entries = (await webModules())?.entries ?? [];
  for (const entry of entries) {
    try {
      await import(entry);
    } catch (err) {
      console.error(`FieldForge: the module assets ${entry} could not be loaded`, err);
    }
  }
}
