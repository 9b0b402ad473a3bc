/**
 * Bars fixed to the bottom of the screen share it through `bottomChrome.claim(element, {order})`
 * (spec §4.11). Claims stack by `order`, lower closer to the edge (a customer-facing bar 0, an
 * admin toolbar 10; equal orders stack in claim order). Each claimed element gets
 * `--ff-chrome-offset` (the heights of the claims below it, summed) and the root gets
 * `--ff-bottom-chrome` (the whole stack); both are removed when nothing is claimed. Heights are
 * measured, and measured again whenever a claimed element changes size: an element hidden with
 * `display: none` keeps its claim but counts 0 until it shows again. Claiming an element again
 * changes its order. The element positions itself (the theme's `.ff-bottom-chrome` class does it:
 * `position: fixed; bottom: var(--ff-chrome-offset)`).
 */

/** The orders the spec names. */
export const ORDER = Object.freeze({ customerBar: 0, adminToolbar: 10 });

/** @type {{element: HTMLElement, order: number, seq: number}[]} */
let claims = [];
let seq = 0;
/** @type {ResizeObserver | null} */
let observer = null;

function layout() {
  const root = document.documentElement;
  const ordered = [...claims].sort((a, b) => a.order - b.order || a.seq - b.seq);
  let offset = 0;
  for (const claim of ordered) {
    claim.element.style.setProperty('--ff-chrome-offset', `${offset}px`);
    offset += claim.element.getBoundingClientRect().height;
  }
  if (claims.length) root.style.setProperty('--ff-bottom-chrome', `${offset}px`);
  else root.style.removeProperty('--ff-bottom-chrome');
}

/**
 * Claims a place in the bottom stack for `element`; returns the function that releases it.
 * Example: `const release = bottomChrome.claim(bar, {order: 10})`.
 * @param {HTMLElement} element
 * @param {{order?: number}} [options]
 * @returns {() => void}
 */
function claim(element, options = {}) {
  if (!(element instanceof HTMLElement)) throw new TypeError('bottomChrome.claim needs an element');
  const order = options.order ?? 0;
  if (typeof order !== 'number' || !Number.isFinite(order)) throw new TypeError('bottomChrome.claim: order must be a number');
  const existing = claims.find((c) => c.element === element);
  if (existing) existing.order = order;
  else {
    claims.push({ element, order, seq: seq++ });
    observer ??= new ResizeObserver(layout);
    observer.observe(element);
  }
  layout();
  return () => release(element);
}

/** @param {HTMLElement} element */
function release(element) {
  if (!claims.some((c) => c.element === element)) return;
  claims = claims.filter((c) => c.element !== element);
  observer?.unobserve(element);
  element.style.removeProperty('--ff-chrome-offset');
  layout();
}

export const bottomChrome = Object.freeze({ claim, ORDER });
