/** The browser harness itself: Debian's Chromium loads the platform script from our server, and a request to another host is caught. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { pageImportMap } from '../../src/http/import-map.js';
import { guardedPage, launchBrowser, serveApp, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('core');
  served = await serveApp(t);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

describe('browser harness', () => {
  it('loads /web/platform.js and defines window.fieldforge, with no foreign request', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await g.page.goto('/web/platform.js');
    await g.page.setContent(`<!doctype html><html><head>${pageImportMap().tag}<script type="module" src="/web/platform.js"></script></head><body></body></html>`);
    await g.page.waitForFunction(() => typeof (globalThis as unknown as { fieldforge?: unknown }).fieldforge === 'object');
    g.assertClean();
    await g.close();
  });

  it('records and aborts a request to another host', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await g.page.goto('/web/platform.js');
    await g.page.evaluate(() => fetch('http://example.com/x').catch(() => null));
    expect(g.foreign).toEqual(['http://example.com/x']);
    expect(() => g.assertClean()).toThrow(/other hosts/);
    await g.close();
  });
});

describe('accessibility check', () => {
  it('finds a serious violation on a page that has one, and none on a clean one', async () => {
    const { seriousViolations } = await import('../support/axe.js');
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await g.page.goto('/web/platform.js');
    await g.page.setContent('<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>Title</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><input type="text"></main></body></html>');
    const bad = await seriousViolations(g.page);
    expect(bad.map((f) => f.id)).toEqual(expect.arrayContaining(['image-alt', 'label']));
    await g.page.setContent('<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>Title</h1><img alt="dot" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><label>Name <input type="text"></label></main></body></html>');
    expect(await seriousViolations(g.page)).toEqual([]);
    g.assertClean();
    await g.close();
  });
});
