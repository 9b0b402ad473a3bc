/**
 * When a message was written, as people read it in a feed: "just now", "5 minutes ago",
 * "yesterday" up to a week back, then the language's date and time. The exact instant is kept in
 * `<time datetime>` and its tooltip.
 */
import { html } from '../../lib/html.js';
import { formatDatetime } from '../format.js';

const STEPS = /** @type {const} */ ([
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 7],
]);

/**
 * @param {string} iso @param {string | null} [lang] @param {number} [now]
 * @returns {string}
 */
export function timeAgo(iso, lang, now = Date.now()) {
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return String(iso ?? '');
  let amount = Math.round((at - now) / 1000);
  if (Math.abs(amount) < 45) return 'just now';
  let rtf;
  try {
    rtf = new Intl.RelativeTimeFormat(lang || undefined, { numeric: 'auto' });
  } catch {
    rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  }
  for (const [unit, size] of STEPS) {
    if (Math.abs(amount) < size) return rtf.format(amount, unit);
    amount = Math.round(amount / size);
  }
  return formatDatetime(iso, lang);
}

/** @param {{iso: string, lang?: string | null}} props */
export function TimeLabel({ iso, lang }) {
  return html`<time class="ff-msg-time" datetime=${iso} title=${formatDatetime(iso, lang)}>${timeAgo(iso, lang)}</time>`;
}
