/**
 * The few icons the client draws, as inline SVG: no icon font, no emoji (Debian's Chromium and
 * many servers have no emoji font, which shows empty boxes). Decorative: the button around an
 * icon carries the accessible name.
 */
import { html } from '../../lib/html.js';

const svg = (/** @type {unknown} */ paths) => html`<svg class="ff-icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false"
  fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${paths}</svg>`;

export const CalendarIcon = () => svg(html`<rect x="3" y="5" width="18" height="16" rx="2" /><path d="M16 3v4M8 3v4M3 10h18" />`);

export const TrashIcon = () => svg(html`<path d="M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3" />`);

export const BellIcon = () => svg(html`<path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" /><path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />`);

export const CheckIcon = () => svg(html`<path d="M20 6 9 17l-5-5" />`);
