/**
 * LiquidJS, loaded on first use: ~68 ms and ~14 MiB of the start, and only report generation
 * needs it. `loadLiquidJs` imports it once (a failed import rejects every call with its own
 * error); the synchronous code that works on engines and templates (which exist only once it
 * resolved) reads the module from `liquidJs()`.
 */
import type * as LiquidJs from 'liquidjs';

let loaded: typeof LiquidJs | undefined;
let loading: Promise<typeof LiquidJs> | undefined;

export function loadLiquidJs(): Promise<typeof LiquidJs> {
  return (loading ??= import('liquidjs').then((module) => (loaded = module)));
}

/** The module, once `loadLiquidJs` resolved (a programming error before). */
export function liquidJs(): typeof LiquidJs {
  if (!loaded) throw new Error('liquidjs is used before loadLiquidJs() resolved');
  return loaded;
}
