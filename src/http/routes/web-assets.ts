/**
 * The browser client's files (spec §4.11, CONTRACTS C2): `GET /web/<path>` serves the top-level
 * `web/` folder (platform script, components, theme, client) as written, `GET
 * /web/vendor/<package>@<version>/…` the vendored npm libraries (`web-vendor.ts`), and `GET
 * /web/shared/<path>` the server sources the browser runs too (`SHARED_SOURCES`: one formatter
 * for reports and views, not a copy). Bare imports in any of them are resolved by the pages'
 * import map (`import-map.ts`). Own and shared files are revalidated on every use (`no-cache` plus
 * a strong ETag, so an unchanged file costs a 304); vendored files carry their version in the URL
 * and are cached for a year. What is served is bounded as `asset-folder.ts` says; anything else,
 * `web/tsconfig.json` and type declarations included, is a 404. A module's own web assets are
 * served under `/web/modules/<identifier>/` (`web-modules.ts`).
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFound } from '../../errors.js';
import { IMMUTABLE, SCRIPT_TYPE, asset, assetFolder, sendAsset, type Asset } from '../asset-folder.js';
import { loadVendorModules } from '../web-vendor.js';

/** The client's folder at the repository's top level. */
export const WEB_ROOT = fileURLToPath(new URL('../../../web', import.meta.url));

/** The server's sources (`src/`), of which `SHARED_SOURCES` are served. */
const SOURCE_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Plain ES modules of `src/` (JSDoc-typed JavaScript, no TypeScript syntax) that the browser
 * imports as the server does, under `/web/shared/<the same path>`: their relative imports of each
 * other hold in both places. Listed one by one: nothing else of the server is served.
 */
export const SHARED_SOURCES: readonly string[] = ['i18n/locale-format.js', 'orm/round-to-step.js'];

/** The platform's icon under `web/`, and its address (the pages link it). */
const FAVICON_FILE = 'icons/fieldforge.svg';
export const FAVICON_URL = `/web/${FAVICON_FILE}`;

export interface WebAssetOptions {
  /** Folder to serve instead of `web/` (tests). */
  root?: string;
}

export function registerWebAssetRoutes(app: FastifyInstance, options: WebAssetOptions = {}): void {
  const ownFile = assetFolder(options.root ?? WEB_ROOT);
  const sharedFile = assetFolder(SOURCE_ROOT, { only: new Set(SHARED_SOURCES) });
  const vendorAssets = new Map<string, Asset>();
  for (const [path, file] of loadVendorModules().files) vendorAssets.set(path, asset(file.body, SCRIPT_TYPE, IMMUTABLE));

  // Browsers ask for `/favicon.ico` on any page that names no icon (a JSON answer, a report):
  // the platform's own icon, not a 404. The pages name it (`web-pages.ts`).
  app.get('/favicon.ico', async (req, reply) => {
    const found = await ownFile(FAVICON_FILE);
    if (!found) throw new NotFound('No icon');
    return sendAsset(req, reply, found);
  });

  app.get('/web/*', async (req: FastifyRequest<{ Params: { '*': string } }>, reply) => {
    const relative = req.params['*'];
    const found = relative.startsWith('vendor/') ? vendorAssets.get(relative) ?? null
      : relative.startsWith('shared/') ? await sharedFile(relative.slice('shared/'.length))
        : await ownFile(relative);
    if (!found) throw new NotFound(`No file /web/${relative}`);
    // Published npm code, the same for everyone: the live-chat widget imports it from other sites' pages.
    if (relative.startsWith('vendor/')) void reply.header('Access-Control-Allow-Origin', '*');
    return sendAsset(req, reply, found);
  });
}
