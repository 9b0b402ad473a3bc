/**
 * The project module's web assets, loaded by the web client at start once its core widgets are
 * registered (`web/client/module-assets.js`): the `progress` field widget of the task form's
 * effective hours, and its stylesheet.
 */
import { registry } from 'fieldforge/web/client/registry.js';
import { ProgressField } from './progress-field.js';

registry.field('progress', ProgressField, { types: ['Integer', 'Float'] });

const STYLESHEET = new URL('./progress-field.css', import.meta.url).href;
if (![...document.querySelectorAll('link[rel~="stylesheet"]')].some((l) => /** @type {HTMLLinkElement} */ (l).href === STYLESHEET)) {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = STYLESHEET;
  document.head.append(link);
}
