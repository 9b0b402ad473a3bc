/**
 * What an empty list says: that nothing matches the search (with a way to clear it), or that
 * there is nothing yet (and how to create the first one, when the reader may).
 */
import { html } from '../../../lib/html.js';

/** @param {{title: string, searching: boolean, canCreate: boolean, onClear: () => void}} props */
export function ListEmpty({ title, searching, canCreate, onClear }) {
  return html`<div class="ff-list-empty-message">
    ${searching
      ? html`<p>No ${title.toLowerCase()} match this search.</p>
          <button type="button" class="ff-button" onClick=${onClear}>Clear search and filters</button>`
      : html`<p>No ${title.toLowerCase()} yet.</p>${canCreate ? html`<p class="ff-list-hint">Create the first one with New.</p>` : null}`}
  </div>`;
}
