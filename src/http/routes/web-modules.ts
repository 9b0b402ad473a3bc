/**
 * A module's own web assets (CONTRACTS C2): the files of its `web/` folder, served under
 * `GET /web/modules/<identifier>/<path>` as the client's own are (`asset-folder.ts`), and the
 * entries the web client loads at start, after its core widgets are registered:
 *
 *   GET /api/web-modules → {entries: ['/web/modules/project/index.js', …], modules: ['core', …]}
 *
 * one `web/index.js` per module installed in the caller's database that has one, in the
 * modules' dependency order (a module's widgets may build on those of the modules it depends on),
 * and every installed module (the client draws the bell only where messaging is: asking a
 * database without it for its unread count would be a 404 on every page).
 * The files are static code like the client's, served for any module of the catalog; only the
 * list depends on the database.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFound } from '../../errors.js';
import type { ModuleCatalog } from '../../modules/module-catalog.js';
import { assetFolder, sendAsset, type AssetLookup } from '../asset-folder.js';

/** The file of a module's `web/` folder the client imports. */
export const WEB_MODULE_ENTRY = 'index.js';

type ModuleFileRequest = FastifyRequest<{ Params: { identifier: string; '*': string } }>;

export function registerWebModuleRoutes(app: FastifyInstance, catalog: ModuleCatalog): void {
  const folders = new Map<string, AssetLookup>();
  for (const [identifier, module] of catalog.modules) folders.set(identifier, assetFolder(join(module.dir, 'web')));

  app.get('/web/modules/:identifier/*', async (req: ModuleFileRequest, reply) => {
    const found = await folders.get(req.params.identifier)?.(req.params['*']);
    if (!found) throw new NotFound(`No file /web/modules/${req.params.identifier}/${req.params['*']}`);
    return sendAsset(req, reply, found);
  });

  app.get('/api/web-modules', async (req, reply) => {
    const entries: string[] = [];
    for (const identifier of req.ff!.registry.modules) {
      const module = catalog.modules.get(identifier);
      if (module && (await isFile(join(module.dir, 'web', WEB_MODULE_ENTRY)))) entries.push(`/web/modules/${identifier}/${WEB_MODULE_ENTRY}`);
    }
    void reply.header('Cache-Control', 'no-store');
    return { entries, modules: [...req.ff!.registry.modules] };
  });
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
