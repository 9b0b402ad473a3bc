// @ts-check
/**
 * Starts the vendored Swagger UI on this database's OpenAPI document (the URL the page names in
 * `data-spec-url`). A same-origin file, not an inline script: the page's Content-Security-Policy
 * allows scripts of this server only. `validatorUrl: null` keeps the renderer from sending the
 * document to an online validator for its badge — the page calls no other host.
 */
(function startReference() {
  const root = document.getElementById('swagger-ui');
  /** @type {any} */
  const SwaggerUIBundle = /** @type {any} */ (window).SwaggerUIBundle;
  if (!root || typeof SwaggerUIBundle !== 'function') return;
  SwaggerUIBundle({
    url: root.getAttribute('data-spec-url'),
    domNode: root,
    deepLinking: true,
    docExpansion: 'none',
    defaultModelsExpandDepth: -1,
    filter: true,
    validatorUrl: null,
    displayRequestDuration: true,
    showExtensions: true,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
})();
