/** Links messaging's stylesheet into the page once, on first import (`lib/stylesheet.js`). */
import { linkStylesheet } from '../../lib/stylesheet.js';

linkStylesheet(new URL('./messaging.css', import.meta.url).href);
