/**
 * Where the person is: the menu path of the open action, the action (a link back to its list
 * when a record is open) and the record. The last crumb is the page's `aria-current`.
 */
import { html } from '../../lib/html.js';

/**
 * @typedef {{label: string, onOpen?: () => void, href?: string}} Crumb
 * @param {{crumbs: Crumb[]}} props
 */
export function Breadcrumbs({ crumbs }) {
  if (!crumbs.length) return null;
  return html`<nav class="ff-breadcrumbs" aria-label="Breadcrumb">
    <ol>
      ${crumbs.map((crumb, i) => {
        const last = i === crumbs.length - 1;
        if (last || !crumb.onOpen) {
          return html`<li key=${i}><span aria-current=${last ? 'page' : undefined}>${crumb.label}</span></li>`;
        }
        const open = crumb.onOpen;
        /** @param {MouseEvent} event */
        const click = (event) => {
          if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
          event.preventDefault();
          open();
        };
        return html`<li key=${i}><a href=${crumb.href ?? '#'} onClick=${click}>${crumb.label}</a></li>`;
      })}
    </ol>
  </nav>`;
}
