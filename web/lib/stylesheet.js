/**
 * Links a stylesheet into the page once (the client's parts and modules' web assets link theirs on
 * first import): a `<link>` rather than an `@import` in app.css, whose imported rules axe-core
 * re-reads into an inline `<style>` that the page's Content-Security-Policy refuses.
 * @param {string} href an absolute URL (`new URL('./x.css', import.meta.url).href`)
 */
export function linkStylesheet(href) {
  if ([...document.querySelectorAll('link[rel~="stylesheet"]')].some((l) => /** @type {HTMLLinkElement} */ (l).href === href)) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  document.head.append(link);
}
