/**
 * The SSRF guard of Web Push (CONTRACTS C5 "Web Push", precision 8): a subscription's endpoint is a
 * URL the server will POST to, so it is checked when subscribing and again before every push (a
 * name may resolve elsewhere later). Accepted: `https:` URLs whose host resolves only to public
 * addresses; or any URL whose exact origin (scheme, host, port) is listed in
 * `FF_PUSH_ALLOWED_ORIGINS` (tests, a private push service). Redirects are never followed
 * (`send-push.ts`), so an accepted endpoint cannot bounce the request inward.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { BadRequest } from 'fieldforge';

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

export function allowedPushOrigins(env: NodeJS.ProcessEnv = process.env): Set<string> {
  return new Set((env.FF_PUSH_ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean).map((o) => {
    try {
      return new URL(o).origin;
    } catch {
      throw new Error(`FF_PUSH_ALLOWED_ORIGINS: '${o}' is not an origin such as https://push.example.com or http://127.0.0.1:9555`);
    }
  }));
}

function isPrivate(address: string): boolean {
  // An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is its IPv4 address. (A `::ffff:0:0/96` rule
  // cannot say it: BlockList matches every IPv4 address against IPv6 rules as mapped ones.)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PRIVATE.check(mapped, 'ipv4');
  return PRIVATE.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** Throws `BadRequest` (field `subscription`) unless `endpoint` may receive pushes. */
export async function assertPushEndpoint(endpoint: unknown): Promise<URL> {
  const refuse = (why: string) => new BadRequest(`The subscription's endpoint ${why}`, { field: 'subscription' });
  if (typeof endpoint !== 'string' || endpoint.length > 2048) throw refuse('must be a URL of at most 2048 characters');
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.username || url.password) throw refuse('may not carry credentials');
  if (allowedPushOrigins().has(url.origin)) return url;
  if (url.protocol !== 'https:') throw refuse(`must be an https: URL (or its origin listed in FF_PUSH_ALLOWED_ORIGINS), not ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw refuse(`host ${host} does not resolve`);
  }
  if (!addresses.length || addresses.some(isPrivate)) throw refuse(`host ${host} is not a public address`);
  return url;
}
