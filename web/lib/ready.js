/** Runs `fn` once the document is parsed (at once when it already is). */
export function whenParsed(fn) {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => fn(), { once: true });
  else fn();
}
