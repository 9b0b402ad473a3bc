/**
 * How module code is loaded. Run from its TypeScript sources (tsx, or vitest's module runner), the
 * platform installs Node resolution hooks (`module-loader-hooks.mjs`) before it imports any module
 * file, so a module's TypeScript is an ES module and `'fieldforge'` is this platform wherever the
 * module directory lives — under `modules/`, in an add-on directory inside another package, or in
 * a bare directory with no `package.json` above it.
 *
 * Run compiled (`dist/`, built at install by `bin/build.js`), the built-in modules are compiled
 * too, their `'fieldforge'` imports already made relative by the build: they load as plain
 * JavaScript, with no hook at all. Only module code from elsewhere (`FF_ADDONS_PATH`) installs the
 * hooks, and TypeScript there brings in tsx, on first need — with `'fieldforge'` resolved to the
 * compiled platform, so there is one instance of every class.
 *
 * Under a runner that loads TypeScript itself (vitest) the hooks see only the files that runner
 * hands to Node, and change nothing there.
 */
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Whether this platform runs compiled (`dist/src/modules/module-loader.js`) rather than from its sources. */
const COMPILED = import.meta.url.endsWith('.js');
/** The compiled tree (`dist/`): the module code inside it was built with the platform. */
const BUILD_ROOT = COMPILED ? fileURLToPath(new URL('../../', import.meta.url)) : null;

let hooksRegistered = false;
let typeScript: Promise<void> | null = null;

/** Whether `file` was compiled with the platform (a built-in module's file in `dist/`). */
export function builtWithPlatform(file: string): boolean {
  return BUILD_ROOT !== null && file.startsWith(BUILD_ROOT);
}

/** Readies the loader for module code `file` (models or a data file) and answers the URL to import it by. */
export async function moduleCodeUrl(file: string): Promise<string> {
  if (!builtWithPlatform(file)) {
    if (COMPILED && /\.[mc]?ts$/.test(file)) await ensureTypeScript();
    ensureModuleLoader();
  }
  return pathToFileURL(file).href;
}

function ensureModuleLoader(): void {
  if (hooksRegistered) return;
  hooksRegistered = true;
  registerHooks();
}

function registerHooks(): void {
  register(new URL('./module-loader-hooks.mjs', import.meta.url), {
    data: { fieldforgeUrl: new URL(COMPILED ? '../index.js' : '../index.ts', import.meta.url).href },
  });
}

/**
 * tsx, registered once, for add-on TypeScript in a compiled run. Hooks registered later run
 * first: ours go on top of it again, so that `'fieldforge'` stays the compiled platform (tsx would
 * map it to the sources through the working directory's tsconfig `paths`).
 */
function ensureTypeScript(): Promise<void> {
  typeScript ??= (async () => {
    const { register: registerTsx } = await import('tsx/esm/api');
    registerTsx();
    hooksRegistered = true;
    registerHooks();
  })();
  return typeScript;
}
