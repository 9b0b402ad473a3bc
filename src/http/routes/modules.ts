/**
 * Settings > Modules (spec §2.7): the catalogue with each module's state, and the marks that the
 * next start of the server applies (`api/module-catalogue.ts`). Reading needs the read right on
 * Module; marking needs create and write (administrators'), checked before anything else.
 *
 *   GET    /api/modules                       → [catalogue entry]
 *   POST   /api/modules/{identifier}/install  → {module, with_dependencies, message, command}
 *   POST   /api/modules/{identifier}/upgrade  → same
 *   DELETE /api/modules/{identifier}/pending  → the entry, its mark taken back
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { cancelMark, markModule, moduleCatalogue, type PendingAction } from '../../api/module-catalogue.js';
import type { ModuleCatalog } from '../../modules/module-catalog.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';

type ModuleRequest = FastifyRequest<{ Params: { identifier: string } }>;

export function registerModuleRoutes(app: FastifyInstance, catalog: ModuleCatalog): void {
  app.get('/api/modules', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => moduleCatalogue(catalog)));

  for (const action of ['install', 'upgrade'] as PendingAction[]) {
    app.post(`/api/modules/:identifier/${action}`, IN_UNIT_OF_WORK, (req: ModuleRequest) =>
      unitOfWork(req, () => markModule(catalog, req.params.identifier, action, req.ff!.dbName)));
  }

  app.delete('/api/modules/:identifier/pending', IN_UNIT_OF_WORK, (req: ModuleRequest) =>
    unitOfWork(req, () => cancelMark(catalog, req.params.identifier)));
}
