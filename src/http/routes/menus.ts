/**
 * What the web client's shell navigates with: `GET /api/menus` (the caller's menu tree,
 * `api/menus.ts`) and `GET /api/window-action/{identifier or id}` (an action with its views'
 * arches, `api/window-actions.ts`). Names in the caller's language (`Accept-Language` counts
 * after the user's own `lang`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readableMenus } from '../../api/menus.js';
import { describeWindowAction } from '../../api/window-actions.js';
import { IN_UNIT_OF_WORK, readOnlyWork } from '../request-context.js';

const languageOf = (req: FastifyRequest) => ({ acceptLanguage: req.headers['accept-language'] ?? null });

export function registerMenuRoutes(app: FastifyInstance): void {
  app.get('/api/menus', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => readableMenus(languageOf(req))));

  app.get('/api/window-action/:ref', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () =>
    describeWindowAction((req.params as { ref: string }).ref, languageOf(req))));
}
