/**
 * The platform script and component mounting (spec §4.11 "Component mounting", CONTRACTS C2
 * "Platform script"), in Debian's Chromium against the real server: `window.fieldforge` and its
 * members, `[data-component]` elements mounted once with their `data-props` (now, later, and
 * when their component is registered late), bad JSON contained, `mount()`/unmount, htm markup
 * with no build step, its bare imports resolved by the page's import map.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { openPlatformPage } from '../fixtures/web/platform-page.js';

// The page's globals in the functions evaluated there (the project compiles for Node, without the DOM library).
declare const window: any, document: any, getComputedStyle: any;

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

/** Components the pages register from a module script of their own, after the platform script. */
const REGISTER_GREETING = `<script type="module">
  const { registry, html, hooks } = window.fieldforge;
  window.renders = {};
  window.mounts = {};
  window.cleanups = {};
  registry.component('Greeting', (props) => {
    window.renders[props.who] = (window.renders[props.who] ?? 0) + 1;
    hooks.useEffect(() => {
      window.mounts[props.who] = (window.mounts[props.who] ?? 0) + 1;
      return () => { window.cleanups[props.who] = (window.cleanups[props.who] ?? 0) + 1; };
    }, []);
    return html\`<p class="greeting">Hello <b>\${props.who}</b></p>\`;
  });
  registry.component('Counter', ({ start }) => {
    const [n, setN] = hooks.useState(start);
    return html\`<button type="button" onClick=\${() => setN(n + 1)}>Count \${n}</button>\`;
  });
  registry.component('Plain', ({ text }) => text);
</script>`;

describe('window.fieldforge', () => {
  it('is defined by the module script alone, with every member C2 names, and loads nothing from another host', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const requests: string[] = [];
    g.page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    const page = await openPlatformPage(g, '<div id="a" data-component="Plain" data-props=\'{"text": "x"}\'></div>');
    const shape = await page.evaluate(() => {
      const ff = window.fieldforge;
      return {
        keys: Object.keys(ff).sort(),
        registryComponent: typeof ff.registry.component,
        toast: Object.keys(ff.toast).sort(),
        claim: typeof ff.bottomChrome.claim,
        mount: typeof ff.mount,
        html: typeof ff.html,
        h: typeof ff.h,
        hooks: ['useState', 'useEffect', 'useRef', 'useMemo', 'useCallback', 'useContext', 'useReducer', 'useLayoutEffect', 'useId'].filter((k) => typeof ff.hooks[k] === 'function'),
        components: Object.keys(ff.components).sort(),
        altchaRegistered: ff.registry.get('Altcha') === ff.components.Altcha,
        pinRegistered: ff.registry.get('PinInput') === ff.components.PinInput,
        importMaps: document.querySelectorAll('script[type="importmap"]').length,
        // htm bound to Preact's h: the markup is a Preact vnode.
        vnodeType: ff.html`<span class="x">y</span>`.type,
      };
    });
    expect(shape).toEqual({
      keys: ['bottomChrome', 'components', 'h', 'hooks', 'html', 'mount', 'registry', 'toast'],
      registryComponent: 'function',
      toast: ['error', 'info', 'neutral', 'show', 'success', 'warning'],
      claim: 'function',
      mount: 'function',
      html: 'function',
      h: 'function',
      hooks: ['useState', 'useEffect', 'useRef', 'useMemo', 'useCallback', 'useContext', 'useReducer', 'useLayoutEffect', 'useId'],
      components: ['Altcha', 'PinInput'],
      altchaRegistered: true,
      pinRegistered: true,
      importMaps: 1,
      vnodeType: 'span',
    });
    // Preact and htm came from the platform's own vendored copies, by the page's import map.
    expect(requests).toEqual(expect.arrayContaining([
      '/web/platform.js',
      expect.stringMatching(/^\/web\/vendor\/preact@\d+\.\d+\.\d+\/preact\.mjs$/),
      expect.stringMatching(/^\/web\/vendor\/preact@\d+\.\d+\.\d+\/hooks\.mjs$/),
      expect.stringMatching(/^\/web\/vendor\/htm@\d+\.\d+\.\d+\/htm\.mjs$/),
    ]));
    // The theme's stylesheet is added when the page does not link it.
    await expect.poll(() => page.evaluate(() => getComputedStyle(document.body).fontFamily)).toMatch(/system-ui/);
    g.assertClean();
    await g.close();
  });
});

describe('mounting [data-component] elements', () => {
  it('mounts each element once with its data-props, text stays text, and a late registration mounts the waiting elements', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, `
      <div id="one" data-component="Greeting" data-props='{"who": "Ada"}'>server placeholder</div>
      <section><div id="two" data-component="Greeting" data-props='{"who": "&lt;img src=x onerror=window.pwned=1&gt;"}'></div></section>
      <div id="plain" data-component="Plain" data-props='{"text": "<b>not bold</b>"}'></div>
      <div id="counter" data-component="Counter" data-props='{"start": 3}'></div>`, { head: REGISTER_GREETING });
    await expect.poll(() => page.locator('#one').innerHTML()).toBe('<p class="greeting">Hello <b>Ada</b></p>');
    await expect.poll(() => page.locator('#two .greeting').textContent()).toBe('Hello <img src=x onerror=window.pwned=1>');
    expect(await page.locator('#plain').innerHTML()).toBe('&lt;b&gt;not bold&lt;/b&gt;');
    expect(await page.evaluate(() => window.pwned)).toBeUndefined();
    // Hooks work: a mounted component keeps state.
    await page.getByRole('button', { name: 'Count 3' }).click();
    await expect.poll(() => page.locator('#counter').textContent()).toBe('Count 4');
    // Attribute churn on a mounted element mounts nothing again.
    await page.evaluate(() => {
      const one = document.getElementById('one')!;
      one.setAttribute('data-component', 'Greeting');
      one.setAttribute('data-props', '{"who": "Ada"}');
      one.classList.add('touched');
    });
    await page.waitForTimeout(50);
    expect(await page.evaluate(() => [window.mounts.Ada, window.renders.Ada])).toEqual([1, 1]);

    // A component registered after load mounts the elements that were waiting for it.
    await page.evaluate(() => {
      const late = document.createElement('div');
      late.id = 'late';
      late.setAttribute('data-component', 'Late');
      late.setAttribute('data-props', '{"n": 7}');
      late.textContent = 'waiting';
      document.body.append(late);
    });
    await page.waitForTimeout(50);
    expect(await page.locator('#late').textContent()).toBe('waiting');
    await page.evaluate(() => {
      const { registry, html } = window.fieldforge;
      registry.component('Late', ({ n }: { n: number }) => html`<output>Late ${n}</output>`);
    });
    await expect.poll(() => page.locator('#late').innerHTML()).toBe('<output>Late 7</output>');
    g.assertClean();
    await g.close();
  });

  it('mounts elements added later, nested ones too, and unmounts those removed (their effects clean up)', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, '<main id="main"></main>', { head: REGISTER_GREETING });
    await page.waitForFunction(() => window.renders !== undefined);
    await page.evaluate(() => {
      document.getElementById('main')!.insertAdjacentHTML('beforeend', `
        <div id="added" data-component="Greeting" data-props='{"who": "Grace"}'></div>
        <article><ul><li><span id="nested" data-component="Greeting" data-props='{"who": "Linus"}'></span></li></ul></article>`);
    });
    await expect.poll(() => page.locator('#added').textContent()).toBe('Hello Grace');
    await expect.poll(() => page.locator('#nested').textContent()).toBe('Hello Linus');
    // An element whose data-component appears later is mounted too.
    await page.evaluate(() => {
      const el = document.createElement('div');
      el.id = 'became';
      el.setAttribute('data-props', '{"who": "Barbara"}');
      document.body.append(el);
      setTimeout(() => el.setAttribute('data-component', 'Greeting'), 20);
    });
    await expect.poll(() => page.locator('#became').textContent()).toBe('Hello Barbara');
    // Moving a mounted element within the page keeps its mounting (no second mount).
    await page.evaluate(() => document.body.append(document.getElementById('added')!));
    await page.waitForTimeout(50);
    expect(await page.evaluate(() => [window.mounts.Grace, window.cleanups.Grace])).toEqual([1, undefined]);
    // Removing an element unmounts its component.
    await page.evaluate(() => document.getElementById('nested')!.closest('article')!.remove());
    await expect.poll(() => page.evaluate(() => window.cleanups.Linus)).toBe(1);
    g.assertClean();
    await g.close();
  });

  it('leaves an element with bad data-props empty, names it in a console error, and mounts the others; a throwing component is contained', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, `
      <div id="broken" data-component="Greeting" data-props='{"who": '>placeholder</div>
      <div id="array" data-component="Greeting" data-props='[1, 2]'>placeholder</div>
      <div id="fine" data-component="Greeting" data-props='{"who": "Alan"}'></div>
      <div id="thrower" data-component="Thrower"></div>
      <div id="after" data-component="Greeting" data-props='{"who": "Edsger"}'></div>`, {
      head: `${REGISTER_GREETING}<script type="module">
        window.fieldforge.registry.component('Thrower', () => { throw new Error('component bug'); });
      </script>`,
    });
    await expect.poll(() => page.locator('#fine').textContent()).toBe('Hello Alan');
    await expect.poll(() => page.locator('#after').textContent()).toBe('Hello Edsger');
    expect(await page.locator('#broken').innerHTML()).toBe('');
    expect(await page.locator('#array').innerHTML()).toBe('');
    expect(await page.locator('#thrower').innerHTML()).toBe('');
    expect(g.consoleErrors.some((m) => m.includes('id="broken"') && m.includes('data-props'))).toBe(true);
    expect(g.consoleErrors.some((m) => m.includes('id="array"'))).toBe(true);
    expect(g.consoleErrors.some((m) => m.includes('id="thrower"'))).toBe(true);
    g.assertClean();
    await g.close();
  });

  it('mount(element) mounts one element and returns its unmount; an unmounted element is not mounted again by itself', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, '', { head: REGISTER_GREETING });
    await page.waitForFunction(() => window.renders !== undefined);
    const result = await page.evaluate(async () => {
      const { mount } = window.fieldforge;
      const tick = () => new Promise((r) => setTimeout(r, 120));
      // Not in the document: only mount() mounts it.
      const el = document.createElement('div');
      el.setAttribute('data-component', 'Greeting');
      el.setAttribute('data-props', '{"who": "Tim"}');
      const unmount = mount(el);
      const sameFunction = mount(el) === unmount;
      const mounted = el.textContent;
      await tick(); // effects run after paint
      unmount();
      const afterUnmount = el.innerHTML;
      await tick(); // Preact runs an unmounted component's effect cleanups after paint too
      const cleanups = [window.mounts.Tim, window.cleanups.Tim];
      // In the document now, and the watcher sees it, but it stays unmounted.
      document.body.append(el);
      await tick();
      el.setAttribute('data-component', 'Greeting');
      await tick();
      const stillEmpty = el.innerHTML;
      // Mounting it again is explicit.
      mount(el);
      const remounted = el.textContent;
      let refused = '';
      try {
        mount(document.createElement('div'));
      } catch (err) {
        refused = (err as Error).message;
      }
      return { sameFunction, mounted, afterUnmount, cleanups, stillEmpty, remounted, refused };
    });
    expect(result).toEqual({
      sameFunction: true,
      mounted: 'Hello Tim',
      afterUnmount: '',
      cleanups: [1, 1],
      stillEmpty: '',
      remounted: 'Hello Tim',
      refused: expect.stringContaining('no data-component attribute'),
    });
    g.assertClean();
    await g.close();
  });
});
