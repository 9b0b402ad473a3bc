/**
 * POST /api/import/{model} (spec §4.8, CONTRACTS C3) and GET /api/import-progress/{progress_id}.
 * The import is one unit of work (`src/api/import/import-records.ts` keeps good records apart from
 * refused ones with savepoints inside it); progress is answered from this worker's store, to the
 * principal who started the import only.
 *
 * An import may send up to ten times `FF_BULK_MAX` data rows (100,000 by default): C1's maximum
 * bounds the bulk routes, and an import batches its rows itself. Its JSON body (up to
 * `FF_IMPORT_LIMIT`) is parsed in event-loop turns (`import-body.ts`) by a parser of this route's
 * own plugin scope, so a large import never holds up the worker's other requests.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getProgress, type ProgressOwner } from '../../api/import/import-progress.js';
import { importRecords } from '../../api/import/import-records.js';
import { DEFAULT_BULK_MAX } from '../../api/selection.js';
import { NotFound } from '../../errors.js';
import { currentEnv } from '../../orm/env.js';
import { IN_UNIT_OF_WORK, unitOfWork } from '../request-context.js';
import { parseImportBody } from './import-body.js';

export interface ImportRoutesOptions {
  /** Most records a selection may cover (`FF_BULK_MAX`); an import takes ten times as many rows. */
  bulkMax?: number;
  /** Largest import body, bytes (`FF_IMPORT_LIMIT`); larger → 413. */
  bodyLimit?: number;
}

/** Largest import body unless configured: 100 MiB (the ordinary body limit is 16 MiB). */
export const DEFAULT_IMPORT_BODY_LIMIT = 100 * 1024 * 1024;

/** Data rows one import may send, per record a bulk call may cover. */
export const IMPORT_ROWS_PER_BULK_ITEM = 10;

function ownerOf(req: FastifyRequest): ProgressOwner {
  const ctx = req.ff!;
  return { dbName: ctx.dbName, uid: ctx.principal.uid, serviceAccountId: ctx.principal.serviceAccountId };
}

export function registerImportRoutes(app: FastifyInstance, options: ImportRoutesOptions = {}): void {
  const maxRows = (options.bulkMax ?? DEFAULT_BULK_MAX) * IMPORT_ROWS_PER_BULK_ITEM;
  const bodyLimit = options.bodyLimit ?? DEFAULT_IMPORT_BODY_LIMIT;
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (_req: FastifyRequest, body: Buffer | string) => parseImportBody(body as Buffer));
    scope.post('/api/import/:model', { ...IN_UNIT_OF_WORK, bodyLimit }, (req) => unitOfWork(req, () => {
      const meta = currentEnv().registry.meta((req.params as { model: string }).model);
      return importRecords(meta, req.body, { maxRows, progressOwner: ownerOf(req) });
    }));
  });
  app.get('/api/import-progress/:progress_id', async (req) => {
    const progress = getProgress(ownerOf(req), (req.params as { progress_id: string }).progress_id);
    if (!progress) throw new NotFound('No import progress under this id');
    return progress;
  });
}
