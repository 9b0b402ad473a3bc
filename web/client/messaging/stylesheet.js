/**
 * Links messaging's stylesheet into the page once, on first import (as a module's web assets link
 * theirs): a `<link>` rather than an `@import` in app.css, whose imported rules axe-core re-reads
 * into an inline `<style>` that the page's Content-Security-Policy refuses.
 */
const STYLESHEET = new URL('./messaging.css', import.meta.url).href;

if (![...document.querySelectorAll('link[rel~="stylesheet"]')].some((l) => /** @type {HTMLLinkElement} */ (l).href === STYLESHEET)) {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = STYLESHEET;
  document.head.append(link);
}
