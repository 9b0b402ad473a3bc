/**
 * The SSRF guard of Web Push (CONTRACTS C5 "Web Push", precision 8): a subscription's endpoint is a
 * URL the server will POST to, so it is checked when subscribing and again before every push (a
 * name may resolve elsewhere later). Accepted: `https:` URLs whose host resolves only to public
 * addresses; or any URL whose exact origin (scheme, host, port) is listed in
 * `FF_PUSH_ALLOWED_ORIGINS` (tests, a private push service). The addresses checked are the ones
 * the push connects to (`PushTarget.addresses`, pinned by `send-push.ts`): a name that answers a
 * public address to the check and a private one to the connection (DNS rebinding) gets nowhere.
 * Redirects are never followed, so an accepted endpoint cannot bounce the request inward either.
 */
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { BadRequest } from 'fieldforge';
import { pushAllowedOrigins } from '../../../src/config/settings.js';

/** Addresses a push may never reach: loopback, private, link-local, CGNAT, multicast, reserved, and their IPv6 forms. */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv6');

/** The origins `FF_PUSH_ALLOWED_ORIGINS` lists, read at each check (a test sets it while running). */
export function allowedPushOrigins(env: NodeJS.ProcessEnv = process.env): Set<string> {
  return pushAllowedOrigins(env.FF_PUSH_ALLOWED_ORIGINS);
}

function isPrivate(address: string): boolean {
  // An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is its IPv4 address. (A `::ffff:0:0/96` rule
  // cannot say it: BlockList matches every IPv4 address against IPv6 rules as mapped ones.)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PRIVATE.check(mapped, 'ipv4');
  return PRIVATE.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** An endpoint that passed the guard, and the addresses its host resolved to then: the only ones a push may connect to. */
export interface PushTarget {
  url: URL;
  addresses: LookupAddress[];
}

/** Throws `BadRequest` (field `subscription`) unless `endpoint` may receive pushes. */
export async function assertPushEndpoint(endpoint: unknown): Promise<URL> {
  return (await pushTarget(endpoint)).url;
}

/** The endpoint checked and resolved; `BadRequest` (field `subscription`) when it may not receive pushes. */
export async function pushTarget(endpoint: unknown): Promise<PushTarget> {
  const refuse = (why: string) => new BadRequest(`The subscription's endpoint ${why}`, { field: 'subscription' });
  if (typeof endpoint !== 'string' || endpoint.length > 2048) throw refuse('must be a URL of at most 2048 characters');
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.username || url.password) throw refuse('may not carry credentials');
  const allowed = allowedPushOrigins().has(url.origin);
  if (!allowed && url.protocol !== 'https:') throw refuse(`must be an https: URL (or its origin listed in FF_PUSH_ALLOWED_ORIGINS), not ${url.protocol}`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(`must be an https: URL, not ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  try {
    const family = isIP(host);
    addresses = family ? [{ address: host, family }] : await lookup(host, { all: true, verbatim: true });
  } catch {
    throw refuse(`host ${host} does not resolve`);
  }
  if (!addresses.length) throw refuse(`host ${host} does not resolve`);
  if (!allowed && addresses.some((a) => isPrivate(a.address))) throw refuse(`host ${host} is not a public address`);
  return { url, addresses };
}
