/**
 * How module code is loaded: the platform installs Node resolution hooks
 * (`module-loader-hooks.mjs`) before it imports any module file, so a module's TypeScript is an
 * ES module and `'fieldforge'` is this platform wherever the module directory lives — under
 * `modules/`, in an add-on directory inside another package, or in a bare directory with no
 * `package.json` above it.
 *
 * Under a runner that loads TypeScript itself (vitest's module runner) the hooks see only the
 * files that runner hands to Node, and change nothing there.
 */
import { register } from 'node:module';

let registered = false;

export function ensureModuleLoader(): void {
  if (registered) return;
  registered = true;
  register(new URL('./module-loader-hooks.mjs', import.meta.url), {
    data: { fieldforgeUrl: new URL('../index.ts', import.meta.url).href },
  });
}
