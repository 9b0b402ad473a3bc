/**
 * The main menu: the database's menus as a navigation landmark, each top-level menu a section
 * that folds (a disclosure button with `aria-expanded`), each menu that opens something a link
 * named by the menu (`#action=…`, so it can be opened in a new tab), the current one marked with
 * `aria-current="page"`. A plain click navigates through the shell (the unsaved-edits guard).
 */
import { html } from '../../lib/html.js';
import { useState } from 'preact/hooks';
import { actionHref } from './menu-tree.js';

/** @typedef {import('./menu-tree.js').MenuNode} MenuNode */

/**
 * @param {{tree: MenuNode[], current: string | null, onOpen: (action: string) => void, id: string, open: boolean}} props
 */
export function MainMenu({ tree, current, onOpen, id, open }) {
  return html`<nav id=${id} class=${`ff-main-menu${open ? ' is-open' : ''}`} aria-label="Main menu">
    ${tree.length
      ? html`<ul class="ff-main-menu__list">${tree.map((node) => html`<${MenuSection} key=${node.id} node=${node} current=${current} onOpen=${onOpen} />`)}</ul>`
      : html`<p class="ff-main-menu__empty">No menus are available to you. Ask an administrator for access.</p>`}
  </nav>`;
}

/** @param {{node: MenuNode, current: string | null, onOpen: (action: string) => void}} props */
function MenuSection({ node, current, onOpen }) {
  const [expanded, setExpanded] = useState(true);
  const listId = `ff-menu-${node.id}`;
  if (!node.children.length) {
    return html`<li class="ff-main-menu__section"><${MenuLink} node=${node} current=${current} onOpen=${onOpen} top=${true} /></li>`;
  }
  return html`<li class="ff-main-menu__section">
    <button type="button" class="ff-main-menu__heading" aria-expanded=${expanded ? 'true' : 'false'} aria-controls=${listId}
      onClick=${() => setExpanded(!expanded)}>
      <span>${node.name}</span><span class="ff-main-menu__chevron" aria-hidden="true"></span>
    </button>
    <ul id=${listId} class="ff-main-menu__items" hidden=${!expanded}>
      ${node.action ? html`<li><${MenuLink} node=${node} current=${current} onOpen=${onOpen} /></li>` : null}
      ${node.children.map((child) => html`<${MenuItem} key=${child.id} node=${child} current=${current} onOpen=${onOpen} />`)}
    </ul>
  </li>`;
}

/** A menu under a section: a link, or a group heading with its own links. @param {{node: MenuNode, current: string | null, onOpen: (action: string) => void}} props */
function MenuItem({ node, current, onOpen }) {
  if (!node.children.length) return html`<li><${MenuLink} node=${node} current=${current} onOpen=${onOpen} /></li>`;
  const headingId = `ff-menu-group-${node.id}`;
  return html`<li class="ff-main-menu__group">
    <span id=${headingId} class="ff-main-menu__group-name">${node.name}</span>
    <ul aria-labelledby=${headingId}>
      ${node.action ? html`<li><${MenuLink} node=${node} current=${current} onOpen=${onOpen} /></li>` : null}
      ${node.children.map((child) => html`<${MenuItem} key=${child.id} node=${child} current=${current} onOpen=${onOpen} />`)}
    </ul>
  </li>`;
}

/** @param {{node: MenuNode, current: string | null, onOpen: (action: string) => void, top?: boolean}} props */
function MenuLink({ node, current, onOpen, top = false }) {
  const action = /** @type {string} */ (node.action);
  /** @param {MouseEvent} event */
  const click = (event) => {
    if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return; // a new tab or window: the browser's
    event.preventDefault();
    onOpen(action);
  };
  return html`<a class=${`ff-main-menu__link${top ? ' ff-main-menu__link--top' : ''}`} href=${actionHref(action)}
    aria-current=${current === action ? 'page' : undefined} onClick=${click}>${node.name}</a>`;
}
