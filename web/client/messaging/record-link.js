/**
 * A record's address when all that is known is its model and id (a feed item, a push
 * notification: `{model, document}`): `/web#model=ProjectTask&id=5`. The shell turns it into the
 * record's form of the window action that opens that model — the one a menu offers first, else
 * any action of the model with a form — and replaces the address with `#action=…&view=form&id=5`
 * (CONTRACTS C2, C5 precision 10), so Back does not come through the lookup again.
 */
import { api } from '../api.js';

/** `#model=…&id=…` inside the shell. @param {string} model @param {number} id */
export function recordHash(model, id) {
  return `#${new URLSearchParams({ model, id: String(id) }).toString()}`;
}

/** The absolute address (for a push notification's click). @param {string} model @param {number} id */
export function recordUrl(model, id) {
  return `/web${recordHash(model, id)}`;
}

/** @type {Map<string, Promise<string | null>>} */
const resolved = new Map();

/**
 * The action (identifier, or id as a string) opening `model`'s records, or null when none does
 * for this user. Cached for the page's life.
 * @param {string} model @param {string[]} menuActions the actions the menus open, in menu order
 * @returns {Promise<string | null>}
 */
export function actionOfModel(model, menuActions) {
  let found = resolved.get(model);
  if (!found) {
    found = lookUp(model, menuActions);
    resolved.set(model, found);
    found.catch(() => resolved.delete(model));
  }
  return found;
}

/** @param {string} model @param {string[]} menuActions */
async function lookUp(model, menuActions) {
  const answer = /** @type {{data?: any[]} | any[]} */ (await api.query('WindowAction', {
    fields: ['identifier', 'modes', 'client_view'],
    filter_str: `Q(model=${JSON.stringify(model)})`,
    order_by: ['id ASC'],
    limit: 50,
  }));
  const rows = /** @type {{id: number, identifier: string | null, modes: unknown, client_view?: string | null}[]} */ (Array.isArray(answer) ? answer : answer.data ?? []);
  // The generic views only (a client screen shows no record); those with a form mode first.
  const withForm = (/** @type {{modes: unknown}} */ r) => modesOf(r.modes).includes('form');
  const generic = rows.filter((r) => !r.client_view).sort((a, b) => Number(withForm(b)) - Number(withForm(a)));
  if (!generic.length) return null;
  const refOf = (/** @type {{id: number, identifier: string | null}} */ r) => r.identifier ?? String(r.id);
  const byMenu = menuActions.map((ref) => generic.find((r) => refOf(r) === ref || String(r.id) === ref)).find(Boolean);
  return refOf(byMenu ?? generic[0]);
}

/** @param {unknown} modes */
function modesOf(modes) {
  const list = Array.isArray(modes) ? modes : typeof modes === 'string' ? modes.split(',') : [];
  return list.map((m) => String(m).trim().toLowerCase());
}
