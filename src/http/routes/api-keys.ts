/**
 * API key administration (spec §5, §3): create a key (for a new service account, or for an
 * existing one to rotate), list keys, revoke one. Rights decide who may: `create`/`read`/`write`
 * on ApiKey, which the core module grants administrators only. The work is `auth/api-keys.ts`'s;
 * the handlers parse the request and shape the answer. Deactivating an account is an ordinary
 * update of `ServiceAccount.active` through the generic API.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertRight } from '../../access/record-access.js';
import { createServiceAccountKey, listApiKeys, revokeApiKey, type ApiKeyScope } from '../../auth/api-keys.js';
import { BadRequest } from '../../errors.js';
import { currentEnv } from '../../orm/env.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';
import { RequestBody, recordId } from './request-body.js';

const CREATE_KEYS = new Set(['name', 'groups', 'expires_at', 'service_account', 'scopes']);

/** A misspelt option (`expire_at`) must not silently give a key that never expires: refuse it. */
function refuseUnknownKeys(body: RequestBody): void {
  const unknown = Object.keys(body.raw).find((k) => !CREATE_KEYS.has(k));
  if (unknown !== undefined) {
    throw new BadRequest(`Unknown key '${unknown.slice(0, 40)}': expected ${[...CREATE_KEYS].join(', ')}`);
  }
}

export function registerApiKeyRoutes(app: FastifyInstance): void {
  app.post('/api/api-keys', IN_UNIT_OF_WORK, (req) => unitOfWork(req, async () => {
    // Before reading the body: someone without the right learns nothing from validation messages.
    assertRight(currentEnv().registry.meta('ApiKey'), 'create');
    const body = new RequestBody(req.body);
    refuseUnknownKeys(body);
    const created = await createServiceAccountKey({
      name: body.string('name') ?? '',
      groups: body.strings('groups') ?? [],
      expiresAt: body.string('expires_at') ?? null,
      serviceAccountId: body.integer('service_account', 1, 2_147_483_647) ?? null,
      // Checked entry by entry by the service.
      scopes: body.raw.scopes as readonly ApiKeyScope[] | null | undefined,
    });
    return {
      id: created.apiKeyId, key: created.key, prefix: created.prefix,
      service_account: created.serviceAccountId, expires_at: created.expiresAt,
    };
  }));

  app.get('/api/api-keys', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => listApiKeys()));

  app.delete('/api/api-keys/:id', IN_UNIT_OF_WORK, (req: FastifyRequest) => unitOfWork(req, async () => {
    assertRight(currentEnv().registry.meta('ApiKey'), 'write');
    const id = recordId((req.params as { id: string }).id);
    await revokeApiKey(id);
    return { id, revoked: true };
  }));
}
