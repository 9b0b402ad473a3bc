/**
 * Web Push as the model service offers it (CONTRACTS C5): the database's public key and the
 * caller's browser subscriptions, handed to the messaging module's `PushSubscription` (its
 * `public_key`, `subscribe`, `unsubscribe` and `renew`), which exists only where messaging is installed.
 */
import { BadRequest, NotFound } from '../errors.js';
import { currentEnv } from '../orm/env.js';

interface PushModel {
  public_key(): Promise<{ public_key: string }>;
  subscribe(body: Record<string, unknown>): Promise<unknown>;
  unsubscribe(body: Record<string, unknown>): Promise<unknown>;
  renew(body: Record<string, unknown>): Promise<unknown>;
}

function pushModel(): PushModel {
  const { registry } = currentEnv();
  if (!registry.has('PushSubscription')) throw new NotFound('Web Push needs the messaging module, which is not installed in this database');
  return registry.meta('PushSubscription').cls as unknown as PushModel;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequest('The body must be a JSON object');
  return body as Record<string, unknown>;
}

export const pushKey = () => pushModel().public_key();
export const pushSubscribe = (body: unknown) => pushModel().subscribe(objectBody(body));
export const pushUnsubscribe = (body: unknown) => pushModel().unsubscribe(objectBody(body));
export const pushRenew = (body: unknown) => pushModel().renew(objectBody(body));
