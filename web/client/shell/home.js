/**
 * The shell with no action open (`/web`): one tile per top-level menu, opening the first thing it
 * holds; and a word about the command palette.
 */
import { html } from '../../lib/html.js';
import { actionHref, firstAction } from './menu-tree.js';

/**
 * @param {{tree: import('./menu-tree.js').MenuNode[], user: {name: string}, onOpen: (action: string) => void}} props
 */
export function Home({ tree, user, onOpen }) {
  const tiles = tree.map((node) => ({ node, action: firstAction(node) })).filter((t) => t.action);
  return html`<section class="ff-home" aria-labelledby="ff-home-title">
    <h1 id="ff-home-title" class="ff-home__title">Welcome, ${user.name}</h1>
    ${tiles.length
      ? html`<ul class="ff-home__tiles">
          ${tiles.map(({ node, action }) => html`<li key=${node.id}>
            <a class="ff-home__tile" href=${actionHref(/** @type {string} */ (action))}
              onClick=${(/** @type {MouseEvent} */ e) => {
                if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
                e.preventDefault();
                onOpen(/** @type {string} */ (action));
              }}>${node.name}</a>
          </li>`)}
        </ul>
        <p class="ff-home__hint">Press <kbd>Ctrl</kbd>+<kbd>K</kbd> to jump to any menu.</p>`
      : html`<p>No menus are available to you. Ask an administrator for access.</p>`}
  </section>`;
}
