/**
 * The pages of `/api-docs`: the reference itself (Swagger UI, vendored from npm and served by
 * this server under `/api-docs/assets/`) and the 401 page of a missing, invalid, expired or
 * revoked link. Both are static HTML with no inline script, so the Content-Security-Policy can
 * forbid every other host and every inline script: the page cannot call anywhere else even if a
 * future renderer release tried to.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { WEB_ROOT } from './web-assets.js';

/** Scripts, styles, images and requests from this server only; Swagger UI styles elements inline. */
export const API_DOCS_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "font-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The reference page of database `dbName`; `specUrl` is its OpenAPI document (same origin). */
export function referencePage(dbName: string, specUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>API reference · ${escapeHtml(dbName)}</title>
<link rel="icon" type="image/png" href="/api-docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/api-docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/api-docs/assets/api-docs.css">
</head>
<body>
<main id="swagger-ui" data-spec-url="${escapeHtml(specUrl)}" aria-label="API reference"></main>
<noscript>The API reference needs JavaScript. The OpenAPI document is at <a href="${escapeHtml(specUrl)}">${escapeHtml(specUrl)}</a>.</noscript>
<script src="/api-docs/assets/swagger-ui-bundle.js"></script>
<script src="/api-docs/assets/api-docs.js"></script>
</body>
</html>
`;
}

/** What a browser gets without a valid link: says why and what to do, reveals nothing. */
export function unauthorizedPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>API reference · access needed</title>
<link rel="stylesheet" href="/api-docs/assets/api-docs.css">
</head>
<body>
<main class="ff-docs-denied">
<h1>This API reference link is missing, invalid, expired or revoked</h1>
<p>The API reference of this database opens through a link an administrator creates in
<strong>Settings › General › API Reference</strong>. Ask an administrator for a new link.</p>
</main>
</body>
</html>
`;
}

interface Asset {
  type: string;
  load: () => Promise<Buffer>;
}

const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** A vendored file, read once: it changes only with the package's version (a restart). */
function vendored(file: string, type: string): Asset {
  let body: Promise<Buffer> | null = null;
  return { type, load: () => (body ??= readFile(join(swaggerDir, file))) };
}
/** The page's own files, in the client's folder (`web/api-docs/`). */
const own = (file: string, type: string): Asset => ({ type, load: () => readFile(join(WEB_ROOT, 'api-docs', file)) });

/** The files under `/api-docs/assets/`: a fixed list, so no path of the request reaches the disk. */
export const API_DOCS_ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['swagger-ui-bundle.js', vendored('swagger-ui-bundle.js', 'text/javascript; charset=utf-8')],
  ['swagger-ui.css', vendored('swagger-ui.css', 'text/css; charset=utf-8')],
  ['favicon-32x32.png', vendored('favicon-32x32.png', 'image/png')],
  ['api-docs.js', own('api-docs.js', 'text/javascript; charset=utf-8')],
  ['api-docs.css', own('api-docs.css', 'text/css; charset=utf-8')],
]);
