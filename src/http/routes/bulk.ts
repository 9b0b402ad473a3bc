/**
 * The bulk routes and clone (CONTRACTS C1): each parses nothing beyond the model name and hands
 * the body to the model service (`src/api/bulk-writes.ts`, `clone-records.ts`), in one unit of
 * work — any refusal leaves nothing written.
 *
 *   POST   /api/bulk-create/{model}   bare array of value objects      → [{id, name, display_name}], body order
 *   PUT    /api/bulk-update/{model}   [{id, …vals}] or {selection, vals} → {updated, ids}
 *   DELETE /api/bulk-delete/{model}   [ids] or a selection object       → {deleted, ids}
 *   POST   /api/clone/{model}         {ids} or a selection object       → [{id, name, display_name}], selection order
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bulkCreate, bulkDelete, bulkUpdate } from '../../api/bulk-writes.js';
import { cloneRecords } from '../../api/clone-records.js';
import { DEFAULT_BULK_MAX } from '../../api/selection.js';
import { currentEnv } from '../../orm/env.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { IN_UNIT_OF_WORK, unitOfWork } from '../request-context.js';

export interface BulkRouteOptions {
  /** Most items of a body, or records a selection matches (`FF_BULK_MAX`). */
  bulkMax?: number;
}

function modelOf(req: FastifyRequest): ModelMeta {
  return currentEnv().registry.meta((req.params as { model: string }).model);
}

export function registerBulkRoutes(app: FastifyInstance, options: BulkRouteOptions = {}): void {
  const limits = { max: options.bulkMax ?? DEFAULT_BULK_MAX };
  app.post('/api/bulk-create/:model', IN_UNIT_OF_WORK, (req) => unitOfWork(req, () => bulkCreate(modelOf(req), req.body, limits)));
  app.put('/api/bulk-update/:model', IN_UNIT_OF_WORK, (req) => unitOfWork(req, () => bulkUpdate(modelOf(req), req.body, limits)));
  app.delete('/api/bulk-delete/:model', IN_UNIT_OF_WORK, (req) => unitOfWork(req, () => bulkDelete(modelOf(req), req.body, limits)));
  app.post('/api/clone/:model', IN_UNIT_OF_WORK, (req) => unitOfWork(req, () => cloneRecords(modelOf(req), req.body, limits)));
}
