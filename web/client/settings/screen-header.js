/**
 * The top of a settings screen: its title (the page's one `h1`), a sentence on what it is for,
 * and its actions (`New`).
 */
import { html } from '../../lib/html.js';

/** @param {{title: string, id?: string, intro?: unknown, actions?: unknown}} props `id` of the title, for the screen's `aria-labelledby` */
export function ScreenHeader({ title, id, intro = null, actions = null }) {
  return html`<header class="ff-settings-header">
    <div class="ff-settings-header__text">
      <h1 class="ff-settings-title" id=${id}>${title}</h1>
      ${intro ? html`<p class="ff-settings-intro">${intro}</p>` : null}
    </div>
    ${actions ? html`<div class="ff-settings-header__actions">${actions}</div>` : null}
  </header>`;
}
