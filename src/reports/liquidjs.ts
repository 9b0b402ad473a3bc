/**
 * LiquidJS, loaded on first use: ~68 ms and ~14 MiB of the start, and only report generation
 * needs it. `liquidJs.load()` imports it once; the synchronous code that works on engines and
 * templates (which exist only once it resolved) reads it with `liquidJs.get()`.
 */
import { LazyModule } from '../lazy-module.js';

export const liquidJs = new LazyModule(() => import('liquidjs'));
