/**
 * Toasts (spec §4.11 "Toasts", CONTRACTS C2) in Debian's Chromium: the five intents and how long
 * each stays (the spec's table, measured on Playwright's clock, so no test waits for real),
 * `duration` and `duration: 0`, `show()` returning `{close}`, roles (`status`, `alert` for
 * errors), text never markup, and the arrival toast of `notify_title` / `notify_message` /
 * `notify_color` with those parameters then stripped from the address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { openPlatformPage } from '../fixtures/web/platform-page.js';

// The page's globals in the functions evaluated there (the project compiles for Node, without the DOM library).
declare const window: any, document: any, history: any, location: any;

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

const CLOCK_START = Date.parse('2026-03-02T09:00:00Z');

/** A platform page whose clock only moves when the test says so. */
async function clockedPage(path?: string): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  // Installed, the fake clock still runs with real time; paused, it moves only by runFor.
  await g.page.clock.install({ time: CLOCK_START });
  await g.page.clock.pauseAt(CLOCK_START + 1_000);
  await openPlatformPage(g, '<main><h1>Orders</h1></main>', { path });
  return g;
}

/** The toasts on the page: intent, role and text, in order. */
function toasts(g: GuardedPage) {
  return g.page.evaluate(() => [...document.querySelectorAll('.ff-toast')].map((el: any) => ({
    intent: el.dataset.intent,
    role: el.getAttribute('role'),
    text: el.querySelector('.ff-toast__text').textContent,
  })));
}

const intentsOf = async (g: GuardedPage) => (await toasts(g)).map((x) => x.intent);

describe('toast', () => {
  it('keeps each intent for the time of the spec table: success 4 s, error 8 s, warning 6 s, info 5 s, neutral 4 s', async () => {
    const g = await clockedPage();
    await g.page.evaluate(() => {
      const { toast } = window.fieldforge;
      toast.success('Order confirmed', 'Saved');
      toast.error('The server refused the order');
      toast.warning('Stock is low');
      toast.info('Export started');
      toast.neutral('Nothing to do');
    });
    expect(await toasts(g)).toEqual([
      { intent: 'success', role: 'status', text: 'SavedOrder confirmed' },
      { intent: 'error', role: 'alert', text: 'The server refused the order' },
      { intent: 'warning', role: 'status', text: 'Stock is low' },
      { intent: 'info', role: 'status', text: 'Export started' },
      { intent: 'neutral', role: 'status', text: 'Nothing to do' },
    ]);
    // Found the way a person with a screen reader meets them.
    await expect.poll(() => g.page.getByRole('alert').filter({ hasText: 'The server refused the order' }).count()).toBe(1);
    expect(await g.page.getByRole('status').filter({ hasText: 'Order confirmed' }).count()).toBe(1);

    await g.page.clock.runFor(3_999);
    expect(await intentsOf(g)).toEqual(['success', 'error', 'warning', 'info', 'neutral']);
    await g.page.clock.runFor(1);
    expect(await intentsOf(g)).toEqual(['error', 'warning', 'info']);
    await g.page.clock.runFor(999);
    expect(await intentsOf(g)).toEqual(['error', 'warning', 'info']);
    await g.page.clock.runFor(1);
    expect(await intentsOf(g)).toEqual(['error', 'warning']);
    await g.page.clock.runFor(999);
    expect(await intentsOf(g)).toEqual(['error', 'warning']);
    await g.page.clock.runFor(1);
    expect(await intentsOf(g)).toEqual(['error']);
    await g.page.clock.runFor(1_999);
    expect(await intentsOf(g)).toEqual(['error']);
    await g.page.clock.runFor(1);
    expect(await intentsOf(g)).toEqual([]);
    g.assertClean();
    await g.close();
  });

  it('show({type, title, message, duration}) returns {close}; duration: 0 stays until dismissed; a duration overrides the intent', async () => {
    const g = await clockedPage();
    await g.page.evaluate(() => {
      const { toast } = window.fieldforge;
      window.sticky = toast.show({ type: 'warning', title: 'Unsaved', message: 'Kept until closed', duration: 0 });
      window.short = toast.show({ type: 'success', message: 'Quick', duration: 1500 });
      window.byButton = toast.show({ type: 'info', message: 'Dismiss me', duration: 0 });
      window.closedTwice = toast.show({ type: 'neutral', message: 'Closed early' });
    });
    expect(await g.page.evaluate(() => Object.keys(window.sticky))).toEqual(['close']);
    await g.page.evaluate(() => { window.closedTwice.close(); window.closedTwice.close(); });
    expect(await intentsOf(g)).toEqual(['warning', 'success', 'info']);
    await g.page.clock.runFor(1_499);
    expect(await intentsOf(g)).toEqual(['warning', 'success', 'info']);
    await g.page.clock.runFor(1);
    expect(await intentsOf(g)).toEqual(['warning', 'info']);
    // An hour later the duration-0 toasts are still there.
    await g.page.clock.runFor(3_600_000);
    expect(await toasts(g)).toEqual([
      { intent: 'warning', role: 'status', text: 'UnsavedKept until closed' },
      { intent: 'info', role: 'status', text: 'Dismiss me' },
    ]);
    // Its dismiss button closes one, close() the other.
    await g.page.getByRole('status').filter({ hasText: 'Dismiss me' }).getByRole('button', { name: 'Dismiss notification' }).click();
    expect(await intentsOf(g)).toEqual(['warning']);
    await g.page.evaluate(() => window.sticky.close());
    expect(await intentsOf(g)).toEqual([]);
    g.assertClean();
    await g.close();
  });

  it('shows text as text, closes on Escape, and waits while the pointer rests on it', async () => {
    const g = await clockedPage();
    await g.page.evaluate(() => window.fieldforge.toast.error('<img src=x onerror="window.pwned=1">', '<b>Title</b>'));
    expect(await toasts(g)).toEqual([{ intent: 'error', role: 'alert', text: '<b>Title</b><img src=x onerror="window.pwned=1">' }]);
    expect(await g.page.evaluate(() => [window.pwned, document.querySelectorAll('.ff-toast img, .ff-toast b').length])).toEqual([undefined, 0]);
    await g.page.getByRole('alert').getByRole('button', { name: 'Dismiss notification' }).focus();
    await g.page.keyboard.press('Escape');
    expect(await toasts(g)).toEqual([]);

    await g.page.evaluate(() => window.fieldforge.toast.info('Read me slowly'));
    await g.page.clock.runFor(2_000);
    await g.page.getByRole('status').filter({ hasText: 'Read me slowly' }).hover();
    await g.page.clock.runFor(60_000);
    expect(await intentsOf(g)).toEqual(['info']);
    await g.page.mouse.move(1, 1);
    await g.page.clock.runFor(2_999);
    expect(await intentsOf(g)).toEqual(['info']);
    await g.page.clock.runFor(1);
    expect(await intentsOf(g)).toEqual([]);
    g.assertClean();
    await g.close();
  });
});

describe('arrival toast (notify_title, notify_message, notify_color)', () => {
  it('raises the toast the query asks for, then strips exactly those parameters from the address (no new history entry)', async () => {
    const control = await clockedPage('/platform-test.html?page=2');
    const entries = await control.page.evaluate(() => history.length);
    await control.close();
    const g = await clockedPage('/platform-test.html?page=2&notify_title=Saved&notify_message=Order%20SO001%20confirmed&notify_color=green&q=a%2Bb+c#line-3');
    expect(await toasts(g)).toEqual([{ intent: 'success', role: 'status', text: 'SavedOrder SO001 confirmed' }]);
    expect(await g.page.evaluate(() => [location.pathname + location.search + location.hash, history.length])).toEqual(['/platform-test.html?page=2&q=a%2Bb+c#line-3', entries]);
    // It stays as long as its intent says.
    await g.page.clock.runFor(3_999);
    expect(await intentsOf(g)).toEqual(['success']);
    await g.page.clock.runFor(1);
    expect(await intentsOf(g)).toEqual([]);
    g.assertClean();
    await g.close();
  });

  it('maps each colour to its intent (green, orange, red, blue, gray; anything else neutral) and leaves a clean address', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const cases: [string, string, string][] = [
      ['green', 'success', 'status'],
      ['orange', 'warning', 'status'],
      ['red', 'error', 'alert'],
      ['blue', 'info', 'status'],
      ['gray', 'neutral', 'status'],
      ['purple', 'neutral', 'status'],
    ];
    for (const [color, intent, role] of cases) {
      await openPlatformPage(g, '', { path: `/arrival-${color}.html?notify_message=Colour%20${color}&notify_color=${color}` });
      expect(await toasts(g)).toEqual([{ intent, role, text: `Colour ${color}` }]);
      expect(await g.page.evaluate(() => location.search)).toBe('');
    }
    // A title alone is enough; no colour means neutral.
    await openPlatformPage(g, '', { path: '/arrival-title.html?notify_title=Welcome%20back' });
    expect(await toasts(g)).toEqual([{ intent: 'neutral', role: 'status', text: 'Welcome back' }]);
    expect(await g.page.evaluate(() => location.href)).toBe(`${served.baseUrl}/arrival-title.html`);
    g.assertClean();
    await g.close();
  });
});
