/**
 * The live-chat widget's files (CONTRACTS C5 "Live-chat widget"), for any website to embed with
 * `<script type="module" src="https://HOST/livechat/widget.js" data-db="NAME">`:
 *
 * * `GET /livechat/<file>`: the widget's own scripts and stylesheet (`web/livechat/`);
 * * `GET /livechat/altcha-lib.js`: the proof-of-work solver it imports, a module that re-exports
 *   the vendored altcha-lib (`/web/vendor/…`) by absolute path: a page of another site has no
 *   import map, and the vendored URLs carry the library's version.
 *
 * Every answer is CORS `*` (the live-chat hook of `livechat.ts`; a module script of another origin
 * is fetched in CORS mode), so a page anywhere loads the widget and nothing from a third host.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFound } from '../../errors.js';
import { asset, assetFolder, REVALIDATE, SCRIPT_TYPE, sendAsset } from '../asset-folder.js';
import { loadVendorModules } from '../web-vendor.js';

const WIDGET_ROOT = fileURLToPath(new URL('../../../web/livechat', import.meta.url));

/** The solver's module: the two altcha-lib exports the widget uses, from their vendored URLs. */
function solverModule(): Buffer {
  const { urls } = loadVendorModules();
  const url = (specifier: string) => {
    const found = urls.get(specifier);
    if (!found) throw new Error(`The live-chat widget needs the vendored ${specifier}`);
    return JSON.stringify(found);
  };
  return Buffer.from(
    `export { solveChallenge } from ${url('altcha-lib')};\nexport { deriveKey } from ${url('altcha-lib/algorithms/web/pbkdf2')};\n`,
    'utf8',
  );
}

export function registerLiveChatWidgetRoutes(app: FastifyInstance): void {
  const widgetFile = assetFolder(WIDGET_ROOT);
  const solver = asset(solverModule(), SCRIPT_TYPE, REVALIDATE);

  app.get('/livechat/altcha-lib.js', async (req, reply) => sendAsset(req, reply, solver));
  app.get('/livechat/:file', async (req: FastifyRequest<{ Params: { file: string } }>, reply) => {
    const found = await widgetFile(req.params.file);
    if (!found) throw new NotFound(`No file /livechat/${req.params.file}`);
    return sendAsset(req, reply, found);
  });
}
