/**
 * What forms and dialogs ask while a person edits (spec §4.7, CONTRACTS C1): a wizard's
 * description (`POST /api/action-meta/{model}/{method}`) and the effects of a field change
 * (`POST /api/ui-effect/{model}`). Handlers parse the request and call the model service
 * (`src/api/`); neither writes anything, so both run as read-only work (ui-effect opens its own
 * read-only transaction).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { uiEffect } from '../../api/ui-effect.js';
import { describeWizard } from '../../api/wizard-meta.js';
import { currentEnv } from '../../orm/env.js';
import { INT32_MAX } from '../../orm/fields/scalar-fields.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { IN_UNIT_OF_WORK, readOnlyWork } from '../request-context.js';
import { RequestBody } from './request-body.js';

type Params = { model: string; method?: string };

function modelOf(req: FastifyRequest): ModelMeta {
  return currentEnv().registry.meta((req.params as Params).model);
}

export function registerFormRoutes(app: FastifyInstance): void {
  app.post('/api/action-meta/:model/:method', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => {
    const body = new RequestBody(req.body);
    return describeWizard(modelOf(req), (req.params as Params).method!, {
      context: body.object('context'),
      acceptLanguage: req.headers['accept-language'] ?? null,
    });
  }));

  app.post('/api/ui-effect/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => {
    const body = new RequestBody(req.body);
    return uiEffect(modelOf(req), {
      id: body.integer('id', 1, INT32_MAX),
      vals: body.object('vals'),
      field_name: body.string('field_name'),
    });
  }));
}
