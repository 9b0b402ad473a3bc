/**
 * The npm libraries the browser client runs (Preact, its hooks, htm, and the browser half of
 * altcha-lib for the proof-of-work worker), read once from `node_modules` and served as published
 * under `/web/vendor/<package>@<version>/<file>`. Their bare specifiers (`preact`,
 * `preact/hooks`, `htm`, `altcha-lib…`) are resolved in the browser by the pages' import map
 * (`import-map.ts`), so no file's imports are rewritten: the only change to a vendored file is its
 * trailing source-map comment, dropped because the map's sources are not served. A vendored
 * file's relative imports are vendored with it, at the same relative place, so a multi-file ES
 * module package works as published. A new version is a new URL, so the vendored files are cached
 * for a year, immutable.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix, relative, sep } from 'node:path';

/** One vendored file: the package and version it comes from, and where it lies inside the package. */
interface VendorEntry {
  /** The bare specifier client code imports it by. */
  specifier: string;
  package: string;
  /** File inside the package (not its `exports`: the browser build, which `exports` does not always name). */
  file: string;
  /** Name under `/web/vendor/<package>@<version>/`. */
  name: string;
}

const ENTRIES: readonly VendorEntry[] = [
  { specifier: 'preact', package: 'preact', file: 'dist/preact.mjs', name: 'preact.mjs' },
  { specifier: 'preact/hooks', package: 'preact', file: 'hooks/dist/hooks.mjs', name: 'hooks.mjs' },
  { specifier: 'htm', package: 'htm', file: 'dist/htm.module.js', name: 'htm.mjs' },
  // The solver of the ALTCHA widget's worker: the library's own code, in its WebCrypto flavour.
  { specifier: 'altcha-lib', package: 'altcha-lib', file: 'dist/esm/v2/index.js', name: 'v2/index.js' },
  { specifier: 'altcha-lib/algorithms/web/pbkdf2', package: 'altcha-lib', file: 'dist/esm/v2/algorithms/web/pbkdf2.js', name: 'v2/algorithms/web/pbkdf2.js' },
  { specifier: 'altcha-lib/workers/shared', package: 'altcha-lib', file: 'dist/esm/v2/workers/shared.js', name: 'v2/workers/shared.js' },
];

export interface VendorFile {
  /** Path below `/web/`, e.g. `vendor/preact@11.2.0/preact.mjs`. */
  path: string;
  body: Buffer;
}

export interface VendorModules {
  /** Bare specifier → absolute URL (`preact` → `/web/vendor/preact@11.2.0/preact.mjs`): the import map's vendored entries. */
  urls: ReadonlyMap<string, string>;
  /** Path below `/web/` → file. */
  files: ReadonlyMap<string, VendorFile>;
}

const require = createRequire(import.meta.url);

/** The package's folder and version: up from its entry point to its manifest (not every package exports `./package.json`). */
function packageRoot(name: string): { root: string; version: string } {
  let dir = dirname(require.resolve(name));
  for (;;) {
    const manifestPath = join(dir, 'package.json');
    if (existsSync(manifestPath)) {
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name?: string; version: string };
      if (manifest.name === name) return { root: dir, version: manifest.version };
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`The package ${name} has no manifest above its entry point`);
    dir = parent;
  }
}

/** Read once per process: the installed packages do not change under a running server. */
let loaded: VendorModules | null = null;

/** The vendored files with the files they import relatively; throws at startup when one is missing. */
export function loadVendorModules(): VendorModules {
  loaded ??= readVendorModules();
  return loaded;
}

function readVendorModules(): VendorModules {
  const urls = new Map<string, string>();
  const located = ENTRIES.map((entry) => {
    const { root, version } = packageRoot(entry.package);
    const base = `vendor/${entry.package}@${version}`;
    urls.set(entry.specifier, `/web/${base}/${entry.name}`);
    return { entry, root, base };
  });
  const files = new Map<string, VendorFile>();
  for (const { entry, root, base } of located) {
    // Served paths mirror the package's layout below the entry's folder: `name`'s folder stands for `file`'s.
    const servedDir = posix.dirname(entry.name);
    const sourceDir = dirname(join(root, entry.file));
    const entryFile = join(root, entry.file);
    const pending = [entryFile];
    while (pending.length) {
      const source = pending.pop()!;
      const inside = relative(sourceDir, source).split(sep).join('/');
      const served = source === entryFile ? entry.name : posix.normalize(posix.join(servedDir, inside));
      if (served.startsWith('../') || !source.startsWith(root + sep)) {
        throw new Error(`The vendored ${entry.package} file ${source} imports a file outside ${entry.name}'s folder`);
      }
      const path = `${base}/${served}`;
      if (files.has(path)) continue;
      // The source map names sources that are not served: the comment would only make devtools 404.
      const text = readFileSync(source, 'utf8').replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n');
      files.set(path, { path, body: Buffer.from(text, 'utf8') });
      for (const specifier of relativeImports(text)) pending.push(join(dirname(source), specifier));
    }
  }
  return { urls, files };
}

/** The relative specifiers (`./x.js`, `../y.js`) of a module's static imports and re-exports: the files to vendor along. */
function relativeImports(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*)(["'])(\.{1,2}\/[^"'\n]+)\1/g)) found.push(match[2]!);
  return found;
}
