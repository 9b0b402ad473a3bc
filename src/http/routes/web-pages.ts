/**
 * The web client's two pages (CONTRACTS C2) and the site root: `GET /web/login` (sign-in),
 * `GET /web` (the app shell) and `GET /`, which sends a browser to the shell when it carries a
 * session cookie and to the sign-in page otherwise. The pages are small static documents: the
 * stylesheets, the platform script and the page's entry module, which draws everything else.
 * The import map comes first (`import-map.ts`): it resolves the bare imports of every module
 * script after it. They are never cached (they depend on the database choice) and carry a strict
 * Content-Security-Policy: scripts, styles, connections and workers from this origin only, no
 * inline script but the import map (allowed by its hash), no inline style, no framing.
 *
 * The database: both pages honour `?db=NAME` (then remembered in the `ff_db` cookie) below the
 * header and the host (`database-selection.ts`). When nothing chooses one, the sign-in page asks
 * for it — a list of the databases when `listDatabases` (the default), else a name to type — and
 * the shell sends the browser there.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseChoice, DatabaseSelector } from '../database-selection.js';
import { forgetDatabase, rememberDatabase } from '../database-selection.js';
import { pageImportMap } from '../import-map.js';
import { SESSION_COOKIE } from '../session-cookies.js';
import { FAVICON_URL } from './web-assets.js';

export interface WebPageOptions {
  /**
   * Whether the sign-in page lists the databases to choose from when neither the host, the
   * address nor the cookie names one (as Odoo's `list_db`). Off, the page asks for a name instead.
   */
  listDatabases?: boolean;
}

/** Every stylesheet of the client: the theme, then each area's own (CONTRACTS C2 shell page). */
const STYLESHEETS = [
  '/web/theme.css',
  '/web/client/app.css',
  '/web/client/views/views.css',
  '/web/client/fields/fields.css',
  '/web/client/settings/settings.css',
];

/** The pages' policy: this origin only, and of inline scripts the import map alone. */
export const contentSecurityPolicy = (): string => [
  "default-src 'self'",
  `script-src 'self' ${pageImportMap().scriptHash}`,
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function registerWebPageRoutes(app: FastifyInstance, selector: DatabaseSelector, options: WebPageOptions = {}): void {
  const listDatabases = options.listDatabases ?? true;

  app.get('/', async (req, reply) => {
    const db = (req.query as Record<string, unknown>).db;
    const keep = typeof db === 'string' ? `?db=${encodeURIComponent(db)}` : '';
    const signedIn = Boolean(req.cookies?.[SESSION_COOKIE]);
    pageHeaders(reply);
    return reply.redirect(signedIn ? `/web${keep}` : `/web/login${keep}`, 302);
  });

  app.get('/web/login', async (req, reply) => {
    const choice = await selectorChoice(selector, req, reply);
    const data = choice.name !== null
      ? { db: choice.name, db_source: choice.source, databases: null, refused: null }
      : { db: null, db_source: null, databases: listDatabases ? choice.names : null, refused: choice.refused };
    return sendPage(reply, {
      title: 'Sign in · FieldForge',
      entry: '/web/client/login.js',
      data,
      noscript: 'FieldForge needs JavaScript to sign in: enable it for this site and reload the page.',
    });
  });

  app.get('/web', async (req, reply) => {
    const choice = await selectorChoice(selector, req, reply);
    if (choice.name === null) {
      const db = choice.refused ? `&db=${encodeURIComponent(choice.refused)}` : '';
      pageHeaders(reply);
      return reply.redirect(`/web/login?next=%2Fweb${db}`, 302);
    }
    return sendPage(reply, {
      title: 'FieldForge',
      entry: '/web/client/app.js',
      data: { db: choice.name },
      noscript: 'FieldForge needs JavaScript: enable it for this site and reload the page.',
    });
  });
}

/** The page's database choice; a `?db=` choice is remembered, an empty one forgets. */
async function selectorChoice(selector: DatabaseSelector, req: FastifyRequest, reply: FastifyReply): Promise<DatabaseChoice> {
  const choice = await selector.choose(req, { query: true });
  if (choice.name !== null && choice.source === 'query') rememberDatabase(req, reply, choice.name);
  if ((req.query as Record<string, unknown>).db === '') forgetDatabase(req, reply);
  return choice;
}

function pageHeaders(reply: FastifyReply): void {
  void reply
    .header('Cache-Control', 'no-store')
    .header('Content-Security-Policy', contentSecurityPolicy())
    .header('X-Frame-Options', 'DENY')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin')
    .header('Cross-Origin-Opener-Policy', 'same-origin');
}

interface Page {
  title: string;
  entry: string;
  /** What the entry module reads from `#app`'s `data-page` (JSON). */
  data: Record<string, unknown>;
  noscript: string;
}

function sendPage(reply: FastifyReply, page: Page): FastifyReply {
  pageHeaders(reply);
  const links = STYLESHEETS.map((href) => `<link rel="stylesheet" href="${href}">`).join('\n  ');
  const body = `<!doctype html>
<html lang="en" dir="ltr">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="light dark">
  <title>${escapeHtml(page.title)}</title>
  <link rel="icon" type="image/svg+xml" href="${FAVICON_URL}">
  ${links}
  ${pageImportMap().tag}
  <script type="module" src="/web/platform.js"></script>
  <script type="module" src="${page.entry}"></script>
</head>
<body>
  <noscript><p class="ff-noscript">${escapeHtml(page.noscript)}</p></noscript>
  <div id="app" data-page="${escapeHtml(JSON.stringify(page.data))}"></div>
</body>
</html>
`;
  return reply.type('text/html; charset=utf-8').send(body);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
