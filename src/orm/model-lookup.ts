/**
 * Another module's model, as composed in the current database: `modelOf<typeof CurrencyRate>(
 * 'CurrencyRate').get_rate(…)`. Module code reaches models of its dependencies by name rather than
 * by importing their files, so a module works wherever it is installed from (`FF_ADDONS_PATH`)
 * and sees the extensions other modules made to that model. Import the declaration with
 * `import type` for the static type.
 */
import { currentEnv } from './env.js';
import type { ModelClass } from './model.js';

export function modelOf<T = ModelClass>(name: string): T {
  return currentEnv().registry.meta(name).cls as unknown as T;
}
