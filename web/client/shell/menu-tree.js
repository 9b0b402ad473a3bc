/**
 * The menu tree of `GET /api/menus` and what the shell asks of it: every menu that opens
 * something with the path of names leading to it (the palette, the breadcrumbs), and the first
 * thing a top-level menu opens (its tile on the home page).
 */

/**
 * @typedef {object} MenuNode
 * @property {number} id
 * @property {string | null} identifier
 * @property {string} name
 * @property {number} sequence
 * @property {string | null} icon
 * @property {string | null} action the action it opens (identifier, or id), null for a parent only
 * @property {MenuNode[]} children
 */

/** @typedef {{id: number, name: string, path: string[], action: string}} MenuEntry */

/** Every menu that opens an action, depth first in menu order, with its path of names. @param {MenuNode[]} tree @returns {MenuEntry[]} */
export function menuEntries(tree) {
  /** @type {MenuEntry[]} */
  const out = [];
  /** @param {MenuNode[]} nodes @param {string[]} above */
  const walk = (nodes, above) => {
    for (const node of nodes) {
      const path = [...above, node.name];
      if (node.action) out.push({ id: node.id, name: node.name, path, action: node.action });
      walk(node.children, path);
    }
  };
  walk(tree, []);
  return out;
}

/** The entry of the first menu opening `action`, if any. @param {MenuEntry[]} entries @param {string | undefined} action */
export function entryOfAction(entries, action) {
  return action ? entries.find((e) => e.action === action) ?? null : null;
}

/** The first action a menu or its descendants open. @param {MenuNode} node @returns {string | null} */
export function firstAction(node) {
  if (node.action) return node.action;
  for (const child of node.children) {
    const found = firstAction(child);
    if (found) return found;
  }
  return null;
}

/** `#action=…`: a menu's link. @param {string} action */
export function actionHref(action) {
  return `#${new URLSearchParams({ action }).toString()}`;
}
