/**
 * POST /api/resequence/{model} (spec §4.9, CONTRACTS C3): `{dropped_column_id, after_column_id,
 * sequence_field?, scope_filter?}` → `{ids}` in the new order, renumbered 1..N in one UPDATE by
 * the model service (`src/api/resequence.ts`), in one unit of work — a refusal writes nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { resequence } from '../../api/resequence.js';
import { DEFAULT_BULK_MAX } from '../../api/selection.js';
import { currentEnv } from '../../orm/env.js';
import { IN_UNIT_OF_WORK, unitOfWork } from '../request-context.js';

export interface ResequenceRoutesOptions {
  /** Most records a selection may cover (`FF_BULK_MAX`); also the most records one resequence renumbers. */
  bulkMax?: number;
}

function modelName(req: FastifyRequest): string {
  return (req.params as { model: string }).model;
}

export function registerResequenceRoutes(app: FastifyInstance, options: ResequenceRoutesOptions = {}): void {
  const limits = { max: options.bulkMax ?? DEFAULT_BULK_MAX };
  app.post('/api/resequence/:model', IN_UNIT_OF_WORK, (req) =>
    unitOfWork(req, () => resequence(currentEnv().registry.meta(modelName(req)), req.body, limits)));
}
