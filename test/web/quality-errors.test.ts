/**
 * A page never shows an internal error to the user (issue 12 item 8): a probe module whose API
 * method and computed field throw plain Errors (real 500s of the real server, not mocked) — the
 * list and the form say "Something went wrong…" with the request id the answer's X-Request-Id
 * carried, and never the thrown message, a stack or the server's body.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

/** What the server must keep to itself: it appears in the thrown errors only. */
const SECRET = 'pg://billing:hunter2@10.0.0.7';

const PROBE_MODELS = `
import { Model, fields } from 'fieldforge';

/** A record whose action and (for "Broken …" records) computed field fail like a bug would. */
export class ErrorProbe extends Model {
  static override _verbose_name = 'Error Probe';
  static override _api_methods = ['action_explode'];
  static override fields = {
    name: fields.Char({ required: true }),
    health: fields.Char({ calculate: 'calc_health' }),
  };

  calc_health(): string {
    if (String(this.name).startsWith('Broken')) throw new Error('health check failed for ${SECRET}');
    return 'fine';
  }

  action_explode(): never {
    throw new Error('cannot reach ${SECRET}');
  }
}
`;

const PROBE_VIEWS = `
- data_type: UiView
  identifier: view_error_probe_list
  name: Error Probes
  type: List
  model: ErrorProbe
  arch:
    - field: { name: name }
    - field: { name: health }
- data_type: WindowAction
  identifier: action_error_probes
  name: Error Probes
  model: ErrorProbe
  modes: List, Form
  default_view: List
  views: [view_error_probe_list]
`;

let t: TestDatabase;
let root: string;
let served: ServedApp;
let browser: Browser;
let fine: number;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-error-probe-'));
  await writeProbeModule(root, 'error_probe', {
    'models/index.ts': PROBE_MODELS,
    'security/access.yaml': adminAccessYaml(['ErrorProbe']),
    'views/probe.yaml': PROBE_VIEWS,
  });
  t = await testDatabase('full', [root]);
  await t.platform.install(t.name, { init: ['error_probe'] });
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  const res = await t.api('POST', '/api/create/ErrorProbe', { name: 'Fine probe' });
  expect(res.statusCode, res.body).toBe(200);
  fine = res.json().id;
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function signedIn(): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  return g;
}

/** Everything a person could read on the page, dialogs and toasts included. */
const visibleText = (page: Page) => page.locator('body').innerText();

function expectNothingInternal(text: string, body: string): void {
  expect(text).not.toContain(SECRET);
  expect(text).not.toMatch(/\bat [\w.<>]+ \(|node:internal|\.ts:\d+/); // no stack frame
  expect(text).not.toContain('health check failed');
  expect(text).not.toContain('cannot reach');
  // The server's body itself leaks nothing either (the client would not show it anyway).
  expect(body).not.toContain(SECRET);
}

describe('internal errors in the browser', () => {
  it('the form: an action that fails shows the friendly sentence with the request id, nothing of the error', async () => {
    const g = await signedIn();
    const { page } = g;
    await page.goto(`/web#action=error_probe.action_error_probes&view=form&id=${fine}`);
    await page.getByLabel('Name', { exact: true }).waitFor();
    const answer = page.waitForResponse((r) => r.url().includes('/api/execute/ErrorProbe/action_explode'));
    await page.getByRole('button', { name: 'Explode' }).click();
    const response = await answer;
    expect(response.status()).toBe(500);
    const requestId = response.headers()['x-request-id'];
    expect(requestId).toMatch(/\S{6,}/);
    const alert = page.getByRole('alert').filter({ hasText: 'Something went wrong' });
    await alert.waitFor();
    expect(await alert.innerText()).toContain(requestId);
    expectNothingInternal(await visibleText(page), await response.text());
    g.assertClean();
    await g.close();
  });

  it('the list: a query that fails says so in place with the request id, nothing of the error', async () => {
    const res = await t.api('POST', '/api/create/ErrorProbe', { name: 'Broken probe' });
    expect(res.statusCode, res.body).toBe(200);
    const g = await signedIn();
    const { page } = g;
    const answer = page.waitForResponse((r) => r.url().includes('/api/query/ErrorProbe') && r.status() === 500);
    await page.goto('/web#action=error_probe.action_error_probes');
    const response = await answer;
    const requestId = response.headers()['x-request-id'];
    expect(requestId).toMatch(/\S{6,}/);
    const alert = page.getByRole('alert').filter({ hasText: 'Something went wrong' });
    await alert.waitFor();
    expect(await alert.innerText()).toContain(requestId);
    expectNothingInternal(await visibleText(page), await response.text());
    g.assertClean();
    await g.close();
  });
});
