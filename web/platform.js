/**
 * The platform script (spec §4.11, CONTRACTS C2): `<script type="module" src="/web/platform.js">`
 * defines `window.fieldforge` with `registry`, `toast`, `bottomChrome`, `mount`, `html`, `h`,
 * `hooks` and `components` (`Altcha`, `PinInput`, also registered under those names), adds the
 * theme's stylesheet unless the page links it, shows the toast the address asks for
 * (`notify_*`), and mounts every `[data-component]` element, now and as they are added.
 * No build step: `preact`, `preact/hooks` and `htm` are the vendored files, resolved by the
 * page's import map (src/http/import-map.ts), which the page carries before this script.
 */
import { h } from 'preact';
import * as preactHooks from 'preact/hooks';
import { Altcha } from './components/altcha.js';
import { PinInput } from './components/pin-input.js';
import { bottomChrome } from './lib/bottom-chrome.js';
import { html } from './lib/html.js';
import { mount, registry, watchDocument } from './lib/mounting.js';
import { whenParsed } from './lib/ready.js';
import { showArrivalToast, toast } from './lib/toast.js';

const THEME_URL = new URL('./theme.css', import.meta.url).href;

const components = Object.freeze({ Altcha, PinInput });

const fieldforge = Object.freeze({
  registry,
  toast,
  bottomChrome,
  mount,
  html,
  h,
  hooks: Object.freeze({ ...preactHooks }),
  components,
});

if (window.fieldforge) {
  console.warn('FieldForge: the platform script is loaded twice; the first copy stays in use');
} else {
  Object.defineProperty(window, 'fieldforge', { value: fieldforge, enumerable: true });
  registry.component('Altcha', Altcha);
  registry.component('PinInput', PinInput);
  whenParsed(() => {
    const linked = [...document.querySelectorAll('link[rel~="stylesheet"]')].some((l) => /** @type {HTMLLinkElement} */ (l).href === THEME_URL);
    if (!linked) {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = THEME_URL;
      document.head.prepend(link);
    }
    showArrivalToast();
    watchDocument();
  });
}

export default fieldforge;
