/**
 * `PinInput` (spec §4.11, CONTRACTS C2) in Debian's Chromium, used as a person does (keyboard,
 * paste, autofill): one box per character with ids `<id>-0` … `<id>-N`, `length`, `type`,
 * `label`, `autoFocus`, `disabled`; auto-advance, Backspace stepping back, arrows, paste and
 * one-time-code autofill spreading across the boxes, left to right under `dir=rtl`. Mounted from
 * `data-props` it keeps its own value and dispatches non-bubbling `input`/`complete`
 * CustomEvents on its element; rendered by a component it is controlled (`value`, `onInput`,
 * `onComplete`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { openPlatformPage } from '../fixtures/web/platform-page.js';

// The page's globals in the functions evaluated there (the project compiles for Node, without the DOM library).
declare const window: any, document: any, DataTransfer: any, ClipboardEvent: any, InputEvent: any, Event: any;

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

/** Records the CustomEvents each PinInput host dispatches, and anything that reaches the document. */
const RECORD_EVENTS = `<script type="module">
  window.events = [];
  window.atDocument = [];
  for (const host of document.querySelectorAll('[data-component="PinInput"]')) {
    for (const type of ['input', 'complete']) {
      host.addEventListener(type, (e) => window.events.push([host.id, type, e.detail, e.bubbles, e instanceof CustomEvent]));
    }
  }
  for (const type of ['input', 'complete', 'change']) document.addEventListener(type, (e) => window.atDocument.push(type));
</script>`;

/** The boxes of the PinInput whose id is `id`: their ids, values, and which one has focus. */
function boxes(page: Page, id: string) {
  return page.evaluate((id) => {
    const all = [...document.querySelectorAll(`input[id^="${id}-"]`)];
    return {
      ids: all.map((b: any) => b.id),
      values: all.map((b: any) => b.value).join('|'),
      focused: document.activeElement?.id ?? null,
    };
  }, id);
}

const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? null);

describe('PinInput mounted from data-props', () => {
  it('gives one labelled box per character, advances, steps back, moves with arrows, refuses letters, and dispatches input/complete on its element', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, `
      <form><div id="otp-host" data-component="PinInput" data-props='{"id": "otp", "label": "Authentication code"}'></div></form>`, { head: RECORD_EVENTS });
    await expect.poll(() => boxes(page, 'otp')).toEqual({ ids: ['otp-0', 'otp-1', 'otp-2', 'otp-3', 'otp-4', 'otp-5'], values: '|||||', focused: 'otp-0' });
    const group = page.getByRole('group', { name: 'Authentication code' });
    expect(await group.getByRole('textbox').count()).toBe(6);
    expect(await page.getByRole('textbox', { name: 'Digit 1 of 6' }).getAttribute('autocomplete')).toBe('one-time-code');
    expect(await page.getByRole('textbox', { name: 'Digit 6 of 6' }).getAttribute('inputmode')).toBe('numeric');

    await page.keyboard.type('12a3');
    expect(await boxes(page, 'otp')).toMatchObject({ values: '1|2|3|||', focused: 'otp-3' });
    await page.keyboard.press('Backspace');
    expect(await boxes(page, 'otp')).toMatchObject({ values: '1|2||||', focused: 'otp-2' });
    await page.keyboard.press('ArrowLeft');
    expect(await focusedId(page)).toBe('otp-1');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    expect(await focusedId(page)).toBe('otp-0');
    await page.keyboard.press('ArrowRight');
    expect(await focusedId(page)).toBe('otp-1');
    await page.keyboard.press('End');
    expect(await focusedId(page)).toBe('otp-2');
    await page.keyboard.press('Home');
    expect(await focusedId(page)).toBe('otp-0');
    // Typing on a filled box replaces its character and moves on.
    await page.keyboard.type('9');
    expect(await boxes(page, 'otp')).toMatchObject({ values: '9|2||||', focused: 'otp-1' });
    // Backspace on a filled box clears it and stays; on an empty box it steps back.
    await page.keyboard.press('Backspace');
    expect(await boxes(page, 'otp')).toMatchObject({ values: '9|||||', focused: 'otp-1' });
    await page.keyboard.type('87654');
    expect(await boxes(page, 'otp')).toMatchObject({ values: '9|8|7|6|5|4', focused: 'otp-5' });
    // Clicking a box selects its character, so typing replaces it.
    await page.locator('#otp-2').click();
    await page.keyboard.type('0');
    expect(await boxes(page, 'otp')).toMatchObject({ values: '9|8|0|6|5|4', focused: 'otp-3' });

    const events = await page.evaluate(() => window.events);
    expect(events.filter((e: unknown[]) => e[1] === 'input').map((e: unknown[]) => e[2])).toEqual(
      ['1', '12', '123', '12', '92', '9', '98', '987', '9876', '98765', '987654', '980654'],
    );
    expect(events.filter((e: unknown[]) => e[1] === 'complete')).toEqual([
      ['otp-host', 'complete', '987654', false, true],
      ['otp-host', 'complete', '980654', false, true],
    ]);
    expect(events.every((e: unknown[]) => e[0] === 'otp-host' && e[3] === false && e[4] === true)).toBe(true);
    // Neither these events nor the boxes' own input events reach the document.
    expect(await page.evaluate(() => window.atDocument)).toEqual([]);
    g.assertClean();
    await g.close();
  });

  it('spreads a paste and a one-time-code autofill across the boxes', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, `
      <div id="paste-host" data-component="PinInput" data-props='{"id": "paste"}'></div>
      <div id="part-host" data-component="PinInput" data-props='{"id": "part", "autoFocus": false}'></div>
      <div id="fill-host" data-component="PinInput" data-props='{"id": "fill", "autoFocus": false}'></div>
      <div id="otp-host" data-component="PinInput" data-props='{"id": "otpfill", "autoFocus": false}'></div>`, { head: RECORD_EVENTS });
    await expect.poll(() => focusedId(page)).toBe('paste-0');
    await page.keyboard.type('1');
    // A whole code pasted anywhere fills from the first box, separators dropped.
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData('text/plain', ' 45 67-89 ');
      document.getElementById('paste-1').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    });
    expect(await boxes(page, 'paste')).toMatchObject({ values: '4|5|6|7|8|9', focused: 'paste-5' });
    // Part of a code continues from the box pasted into.
    await page.locator('#part-0').click();
    await page.keyboard.type('1');
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData('text/plain', '234');
      document.getElementById('part-1').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    });
    expect(await boxes(page, 'part')).toMatchObject({ values: '1|2|3|4||', focused: 'part-4' });
    // Autofill writes the whole code into the first box (autocomplete="one-time-code") and fires input.
    await page.evaluate(() => {
      const box = document.getElementById('fill-0');
      box.value = '246810';
      box.dispatchEvent(new Event('input', { bubbles: true }));
    });
    expect(await boxes(page, 'fill')).toMatchObject({ values: '2|4|6|8|1|0', focused: 'fill-5' });
    await page.evaluate(() => {
      const other = document.getElementById('otpfill-0');
      other.value = '135790';
      other.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertReplacementText' }));
    });
    expect(await boxes(page, 'otpfill')).toMatchObject({ values: '1|3|5|7|9|0', focused: 'otpfill-5' });
    const completes = (await page.evaluate(() => window.events)).filter((e: unknown[]) => e[1] === 'complete').map((e: unknown[]) => [e[0], e[2]]);
    expect(completes).toEqual([['paste-host', '456789'], ['fill-host', '246810'], ['otp-host', '135790']]);
    g.assertClean();
    await g.close();
  });

  it('honours length, type alphanumeric, value, autoFocus false and disabled; boxes stay left to right under dir=rtl', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, `
      <p><label>Name <input id="name" autofocus></label></p>
      <div id="code-host" data-component="PinInput" data-props='{"id": "code", "type": "alphanumeric", "length": 8, "autoFocus": false, "label": "Backup code"}'></div>
      <div id="seeded-host" data-component="PinInput" data-props='{"id": "seeded", "length": 4, "value": "12x3456", "autoFocus": false}'></div>
      <div id="off-host" data-component="PinInput" data-props='{"id": "off", "value": "12", "disabled": true}'></div>`, { head: RECORD_EVENTS, htmlAttributes: 'dir="rtl"' });
    await expect.poll(() => boxes(page, 'code')).toMatchObject({ ids: ['code-0', 'code-1', 'code-2', 'code-3', 'code-4', 'code-5', 'code-6', 'code-7'] });
    // No box took the focus: the page's own autofocus field keeps it.
    expect(await focusedId(page)).toBe('name');
    expect(await page.getByRole('textbox', { name: 'Character 1 of 8' }).getAttribute('inputmode')).toBe('text');
    await page.locator('#code-0').click();
    await page.keyboard.type('ab-12CD9x');
    expect(await boxes(page, 'code')).toMatchObject({ values: 'a|b|1|2|C|D|9|x', focused: 'code-7' });
    expect((await page.evaluate(() => window.events)).filter((e: unknown[]) => e[1] === 'complete').map((e: unknown[]) => e[2])).toEqual(['ab12CD9x']);

    // A seeded value keeps only what fits the type and length.
    expect(await boxes(page, 'seeded')).toMatchObject({ ids: ['seeded-0', 'seeded-1', 'seeded-2', 'seeded-3'], values: '1|2|3|4' });

    // Under dir=rtl the boxes still read left to right, and ArrowRight goes to the next one.
    const xs = await page.evaluate(() => [...document.querySelectorAll('input[id^="code-"]')].map((b: any) => b.getBoundingClientRect().x));
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(8);
    await page.locator('#code-3').click();
    await page.keyboard.press('ArrowRight');
    expect(await focusedId(page)).toBe('code-4');

    // Disabled: every box is disabled and shows the value; nothing types into it.
    expect(await boxes(page, 'off')).toMatchObject({ values: '1|2||||' });
    for (let i = 0; i < 6; i++) expect(await page.locator(`#off-${i}`).isDisabled()).toBe(true);
    expect(await page.getByRole('group', { name: 'Verification code' }).filter({ has: page.locator('#off-0') }).getAttribute('aria-disabled')).toBe('true');
    expect((await page.evaluate(() => window.events)).filter((e: unknown[]) => e[0] === 'off-host')).toEqual([]);
    g.assertClean();
    await g.close();
  });
});

describe('PinInput rendered by a component', () => {
  it('is controlled: shows value, reports onInput(next) and onComplete(entered), and the owner decides what the boxes hold', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, '<div id="form-host" data-component="CodeForm"></div>', {
      head: `<script type="module">
        const { registry, html, hooks, components: { PinInput } } = window.fieldforge;
        window.inputs = [];
        window.completes = [];
        window.hostEvents = [];
        document.getElementById('form-host').addEventListener('complete', () => window.hostEvents.push('complete'));
        registry.component('CodeForm', () => {
          const [code, setCode] = hooks.useState('');
          // The owner refuses sevens: a controlled input shows what its owner keeps.
          const onInput = (next) => { window.inputs.push(next); setCode(next.replace(/7/g, '')); };
          return html\`
            <\${PinInput} id="ctl" label="Code" length=\${4} value=\${code} onInput=\${onInput} onComplete=\${(v) => window.completes.push(v)} />
            <output id="kept">\${code}</output>
            <button type="button" onClick=\${() => setCode('')}>Clear</button>
            <button type="button" onClick=\${() => setCode('4321')}>Fill</button>\`;
        });
      </script>`,
    });
    await expect.poll(() => boxes(page, 'ctl')).toEqual({ ids: ['ctl-0', 'ctl-1', 'ctl-2', 'ctl-3'], values: '|||', focused: 'ctl-0' });
    await page.keyboard.type('17');
    await expect.poll(() => boxes(page, 'ctl')).toMatchObject({ values: '1|||' });
    expect(await page.locator('#kept').textContent()).toBe('1');
    await page.locator('#ctl-1').click();
    await page.keyboard.type('234');
    await expect.poll(() => boxes(page, 'ctl')).toMatchObject({ values: '1|2|3|4' });
    expect(await page.evaluate(() => [window.inputs, window.completes, window.hostEvents])).toEqual([['1', '17', '12', '123', '1234'], ['1234'], []]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => boxes(page, 'ctl')).toMatchObject({ values: '|||' });
    await page.getByRole('button', { name: 'Fill' }).click();
    await expect.poll(() => boxes(page, 'ctl')).toMatchObject({ values: '4|3|2|1' });
    g.assertClean();
    await g.close();
  });
});
