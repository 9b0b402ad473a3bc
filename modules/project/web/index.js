/**
 * The project module's web assets, loaded by the web client at start once its core widgets are
 * registered (`web/client/module-assets.js`): the `progress` field widget of the task form's
 * effective hours, and its stylesheet.
 */
import { linkStylesheet } from 'fieldforge/web/lib/stylesheet.js';
import { registry } from 'fieldforge/web/client/registry.js';
import { ProgressField } from './progress-field.js';

registry.field('progress', ProgressField, { types: ['Integer', 'Float'] });

linkStylesheet(new URL('./progress-field.css', import.meta.url).href);
