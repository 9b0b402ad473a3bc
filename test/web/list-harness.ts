/**
 * The list view's test page: the view mounted alone on a page of our server with what the shell
 * would hand it (the action, its `List` arch, the registry and the model info), its `navigate`
 * recorded in `window.__navigations` (a list change re-renders the view with the new route), and
 * the list's `/api/query` bodies collected. One database, server and browser per test file.
 */
import { afterAll, beforeAll } from 'vitest';
import type { Browser, BrowserContext, Request } from 'playwright-core';
import { pageImportMap } from '../../src/http/import-map.js';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

export const ADMIN = { email: 'admin@example.com', password: 'admin-password-for-tests' };
export const pad = (n: number) => String(n).padStart(3, '0');

export interface OpenedList extends GuardedPage {
  /** Bodies of every `/api/query/<model>` request the page sent for the list's own model. */
  queries: Record<string, any>[];
  navigations(): Promise<{ params: Record<string, string>; options?: { replace?: boolean } }[]>;
}

export interface ListHarness {
  readonly t: TestDatabase;
  readonly served: ServedApp;
  readonly browser: Browser;
  /** The JSON answer of an authenticated API call (a test failure unless 2xx). */
  json(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<any>;
  /** How many records of `model` a query body matches. */
  countOf(model: string, body?: Record<string, unknown>): Promise<number>;
  openList(action: string, options?: { arch?: unknown[]; route?: Record<string, string>; user?: { email: string; password: string }; width?: number }): Promise<OpenedList>;
}

/** Registers the file's hooks: a `full` database seeded by `seed`, a served app and a browser. */
export function listHarness(seed: (h: ListHarness) => Promise<void>): ListHarness {
  let t: TestDatabase;
  let served: ServedApp;
  let browser: Browser;
  const sessions = new Map<string, Awaited<ReturnType<BrowserContext['cookies']>>>();

  const h: ListHarness = {
    get t() { return t; },
    get served() { return served; },
    get browser() { return browser; },
    async json(method, url, body) {
      const res = await t.api(method, url, body);
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async countOf(model, body = {}) {
      return (await h.json('POST', `/api/query/${model}`, { ...body, counter: true, limit: 1 })).count;
    },
    async openList(action, options = {}) {
      const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: options.width ? { viewport: { width: options.width, height: 740 } } : {} });
      const user = options.user ?? ADMIN;
      // One sign-in per user for the whole file: its cookies open every page.
      let cookies = sessions.get(user.email);
      if (!cookies) {
        await signInContext(t, served, g.context, user.email, user.password);
        cookies = await g.context.cookies();
        sessions.set(user.email, cookies);
      } else {
        await g.context.addCookies(cookies);
      }
      const queries: Record<string, any>[] = [];
      let model = '';
      g.page.on('request', (r: Request) => {
        if (model && r.method() === 'POST' && r.url().endsWith(`/api/query/${model}`)) queries.push(JSON.parse(r.postData() ?? '{}'));
      });
      const [found] = await h.json('POST', '/api/query/WindowAction', { fields: ['model'], filter_str: `Q(identifier='${action}')` });
      model = found.model;
      await g.page.goto('/web/platform.js');
      const config = JSON.stringify({ action, arch: options.arch ?? null, route: options.route ?? {} });
      await g.page.setContent(`<!doctype html><html lang="en"><head>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <link rel="stylesheet" href="/web/theme.css"><link rel="stylesheet" href="/web/client/views/views.css">
        ${pageImportMap().tag}
        <script type="module" src="/web/platform.js"></script>
        <script type="module">
          import { html, render } from '/web/lib/html.js';
          import { ListView } from '/web/client/views/list-view.js';
          import { api } from '/web/client/api.js';
          const config = ${config};
          const [action] = await api.query('WindowAction', { filter_str: "Q(identifier='" + config.action + "')", fields: ['identifier', 'name', 'model', 'modes', 'default_view', 'client_view'] });
          const [view] = await api.query('UiView', { filter_str: "Q(model='" + action.model + "') & Q(type='List')", fields: ['arch'], limit: 1 });
          const [registry, modelInfo] = await Promise.all([api.registry(action.model), api.get('/api/model-info/' + action.model)]);
          const views = { List: config.arch ?? view?.arch };
          const session = { user: { id: 1, name: 'Admin', email: 'admin@example.com', lang: 'en', is_admin: true, groups: [] }, db: '', lang: 'en' };
          window.__navigations = [];
          let route = { action: config.action, view: 'list', ...config.route };
          const navigate = (params, options) => {
            window.__navigations.push({ params, options });
            if (params.view === 'list') { route = params; draw(); }
            return Promise.resolve(true);
          };
          const root = document.getElementById('root');
          const draw = () => render(html\`<\${ListView} action=\${action} views=\${views} registry=\${registry} modelInfo=\${modelInfo} route=\${route} navigate=\${navigate} session=\${session} />\`, root);
          draw();
        </script></head><body><main id="root"></main></body></html>`);
      // The table, or the reason there is none.
      await g.page.locator('table, [role=alert]').first().waitFor();
      return { ...g, queries, navigations: () => g.page.evaluate(() => (window as any).__navigations) };
    },
  };

  beforeAll(async () => {
    t = await testDatabase('full');
    served = await serveApp(t);
    browser = await launchBrowser();
    await seed(h);
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await t?.close();
  });
  return h;
}

/** The record rows (not the header, group or footer rows). */
export const recordRows = (g: GuardedPage) => g.page.locator('table tbody tr[data-id]');
/** The first column of the first record row. */
export const firstName = (g: GuardedPage) => recordRows(g).first().locator('td').nth(1);
/** The pager's `1–80 / 250`. */
export const pagerText = (g: GuardedPage) => g.page.getByRole('navigation', { name: 'Pages' }).getByRole('status');
