/**
 * Browser tests: Debian's Chromium driven by playwright-core (never a downloaded browser), against
 * a test database served on a real port. Every page is guarded: a request to any other host
 * fails the test (`assertNoForeignRequests`), as do uncaught page errors, and the request is
 * aborted so nothing ever leaves the machine.
 */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../src/http/app.js';
import { Group, User } from '../../modules/core/models/index.js';
import { solvedAltcha } from './altcha.js';
import type { TestDatabase } from './test-database.js';

export const CHROMIUM = process.env.FF_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (or set FF_CHROMIUM)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

export interface ServedApp {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * An app of the test database's platform listening on 127.0.0.1 (a port of its own), as
 * `fieldforge serve` builds it (not dev mode: no tracebacks), with an easy proof of work so the
 * page's ALTCHA widget solves in milliseconds.
 */
export async function serveApp(t: TestDatabase, options: AppOptions = {}): Promise<ServedApp> {
  const app = await buildApp(t.platform, { dev: false, altchaMaxNumber: 2_000, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, baseUrl, close: () => app.close() };
}

/** A user who signs in with a password, in the given groups (identifiers). Answers the user's id. */
export async function createUserWithPassword(
  t: TestDatabase,
  user: { name: string; email: string; password: string; groups: string[]; lang?: string },
): Promise<number> {
  return t.run(async () => {
    const groups = await Group.query(`Q(identifier__in=${JSON.stringify(user.groups)})`).ids();
    const created = await User.create({ name: user.name, email: user.email, password: user.password, groups, ...(user.lang ? { lang: user.lang } : {}) });
    return created.id;
  });
}

export interface GuardedPage {
  context: BrowserContext;
  page: Page;
  /** Requests the page tried to send to another host (aborted). */
  foreign: string[];
  /** Uncaught errors thrown in the page. */
  pageErrors: string[];
  /** Console messages of type error. */
  consoleErrors: string[];
  /** Fails when any request went to another host or the page threw. */
  assertClean(): void;
  close(): Promise<void>;
}

/**
 * A fresh context and page whose requests may only go to `baseUrl`'s host. `db` is sent as the
 * `X-DB-NAME` header of every request to our server (several test databases share the server),
 * unless `dbHeader: false` (the sign-in page's own choice of database is under test).
 */
export async function guardedPage(
  browser: Browser,
  baseUrl: string,
  options: { db?: string; dbHeader?: boolean; context?: BrowserContextOptions } = {},
): Promise<GuardedPage> {
  const context = await browser.newContext({ baseURL: baseUrl, ...options.context });
  const allowed = new URL(baseUrl).host;
  const foreign: string[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    if (url.host !== allowed) {
      foreign.push(url.href);
      return route.abort('blockedbyclient');
    }
    if (options.db && options.dbHeader !== false) {
      return route.continue({ headers: { ...route.request().headers(), 'x-db-name': options.db } });
    }
    return route.continue();
  });
  const page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err?.stack ?? err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  return {
    context,
    page,
    foreign,
    pageErrors,
    consoleErrors,
    assertClean() {
      if (foreign.length) throw new Error(`the page requested other hosts: ${foreign.join(', ')}`);
      if (pageErrors.length) throw new Error(`the page threw: ${pageErrors.join('\n')}`);
    },
    close: () => context.close(),
  };
}

/**
 * Signs `email` in through the HTTP API (ALTCHA solved in Node) and puts the session cookies in
 * the context, for tests of pages behind the sign-in (the sign-in page has tests of its own).
 */
export async function signInContext(t: TestDatabase, served: ServedApp, context: BrowserContext, email: string, password: string): Promise<void> {
  const altcha = await solvedAltcha(served.app, t.name);
  const res = await served.app.inject({
    method: 'POST',
    url: '/auth/authenticate',
    headers: { 'content-type': 'application/json', 'x-db-name': t.name },
    payload: JSON.stringify({ email, password, altcha, cookie: true }),
  });
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`);
  const host = new URL(served.baseUrl).hostname;
  const cookies = res.cookies.map((c) => ({
    name: c.name,
    value: c.value,
    domain: host,
    path: typeof c.path === 'string' ? c.path : '/',
    httpOnly: Boolean(c.httpOnly),
    secure: false,
    sameSite: (c.sameSite === 'Strict' || c.sameSite === 'strict' ? 'Strict' : 'Lax') as 'Strict' | 'Lax',
  }));
  await context.addCookies(cookies);
}

