/**
 * Markup for the client: `html` is htm bound to Preact's `h`, so components write
 * html`<p class="note">${text}</p>` with no build step. Import these rather than Preact directly.
 */
import { h, render } from 'preact';
import htm from 'htm';

/** Tagged template returning Preact elements (htm syntax). */
export const html = htm.bind(h);

export { h, render };
