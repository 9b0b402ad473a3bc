// @ts-check
/**
 * Node module-resolution hooks for module code (registered by `module-loader.ts`; they run in
 * Node's hooks thread, hence plain JavaScript). The platform, not the place a module directory
 * happens to live in, decides how module files load:
 *
 * * every `.ts`/`.js` file of a module directory (the nearest directory above it holding
 *   `manifest.yaml`) is an ES module. Node's own rule would make it CommonJS whenever no
 *   `package.json` with `"type": "module"` sits above the directory, and tsx follows that rule,
 *   so an add-on in a bare directory used to be compiled to CommonJS and failed ("Cannot
 *   require() ES Module … in a cycle");
 * * `import … from 'fieldforge'` in module code is the running platform's own `src/index.ts`
 *   (the same module instances the platform uses), found from any directory. Package
 *   self-reference only resolves it inside the FieldForge package itself.
 *
 * Module code enters through an absolute `file:` URL (`import(pathToFileURL(file).href)` in the
 * module and data-file loaders); the relative imports of module code that land in a module
 * directory are module code too, resolved here (`./x.js` is `./x.ts` when only that exists, as
 * TypeScript writes it) so that no other hook applies its own format rule to them. Everything
 * else — the platform's `src/`, packages, `node:` — goes to the next hook unchanged. The resolved
 * files are still loaded by the next hooks (tsx compiles the TypeScript), now with the format
 * decided here.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Extensions of module code this loader decides the format of; `.cjs`/`.cts`/`.json` keep theirs. */
const MODULE_CODE = new Set(['.ts', '.js', '.mts', '.mjs']);

/** @type {string} */
let fieldforgeUrl = '';
/** Module directory of each directory seen (null: not inside a module directory). */
const moduleDirOf = new Map();

/** @param {{ fieldforgeUrl: string }} data */
export function initialize(data) {
  fieldforgeUrl = data.fieldforgeUrl;
}

/**
 * @param {string} specifier
 * @param {{ parentURL?: string, conditions: string[], importAttributes: Record<string, string> }} context
 * @param {(specifier: string, context?: object) => Promise<{ url: string, format?: string | null }>} nextResolve
 */
export async function resolve(specifier, context, nextResolve) {
  const parentDir = context.parentURL?.startsWith('file:') ? moduleDirectory(fileURLToPath(context.parentURL)) : null;
  if (parentDir && specifier === 'fieldforge') return { url: fieldforgeUrl, format: 'module', shortCircuit: true };
  if (specifier.startsWith('file:')) {
    const path = fileURLToPath(specifier);
    if (isModuleCode(path) && moduleDirectory(path)) return { url: specifier, format: 'module', shortCircuit: true };
  } else if (parentDir && (specifier.startsWith('./') || specifier.startsWith('../'))) {
    const path = sourceFile(fileURLToPath(new URL(specifier, context.parentURL)));
    if (path && isModuleCode(path) && moduleDirectory(path)) {
      return { url: pathToFileURL(path).href, format: 'module', shortCircuit: true };
    }
  }
  return nextResolve(specifier, context);
}

/** @param {string} path */
function isModuleCode(path) {
  return MODULE_CODE.has(extname(path));
}

/**
 * The file an import names: itself, or the `.ts` source of a `.js` name; null when neither exists.
 * @param {string} path
 */
function sourceFile(path) {
  if (isFile(path)) return path;
  if (path.endsWith('.js') && isFile(path.slice(0, -3) + '.ts')) return path.slice(0, -3) + '.ts';
  return null;
}

/** @param {string} path */
function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The module directory a file belongs to: the nearest directory above it holding `manifest.yaml`,
 * or null. Answers are remembered per directory: each is looked at once per process.
 * @param {string} file
 * @returns {string | null}
 */
function moduleDirectory(file) {
  // Installed packages are never module code, whatever files they ship.
  if (file.split(/[\\/]/).includes('node_modules')) return null;
  const start = dirname(file);
  const walked = [];
  let dir = start;
  let found = null;
  for (;;) {
    const known = moduleDirOf.get(dir);
    if (known !== undefined) {
      found = known;
      break;
    }
    walked.push(dir);
    if (existsSync(join(dir, 'manifest.yaml'))) {
      found = dir;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (const d of walked) moduleDirOf.set(d, found);
  return found;
}
