#!/usr/bin/env node
// `npm install`'s prepare: compiles src/ and modules/ into dist/ once (tsconfig.build.json,
// transpiled without type-checking — `npm test` type-checks), so that a start runs JavaScript and
// loads no TypeScript compiler. dist/ mirrors the repository: every other file of src/ and
// modules/ (YAML, templates, the loader hooks) is a symlink to its source, as are web/ and
// package.json, so paths computed from `import.meta.url` lead to the same files as from the
// sources. Module code's `'fieldforge'` imports become relative imports of dist/src/index.js:
// built-in modules then load without resolution hooks. Without TypeScript installed (a production
// install without dev dependencies) nothing is built and `fieldforge` runs its sources through tsx.
import { existsSync, rmSync } from 'node:fs';
import { mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFresh, SOURCE_DIRS, STAMP_FILE, stampText } from './build-stamp.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist');
const started = Date.now();

// Another `npm install` with nothing changed: nothing to do (`--force` builds all the same).
if (!process.argv.includes('--force') && isFresh(ROOT)) {
  console.log('fieldforge: dist/ is up to date');
  process.exit(0);
}

let ts;
try {
  ts = createRequire(import.meta.url)('typescript');
} catch {
  console.log('fieldforge: TypeScript is not installed; not compiling (fieldforge runs from its sources)');
  process.exit(0);
}

// Built beside dist/ and swapped in whole: a start meanwhile sees the old build or none, never half of one.
const partial = join(ROOT, `dist.partial-${process.pid}`);
await rm(partial, { recursive: true, force: true });

const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), { outDir: partial }, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  },
});
if (config.errors.length) fail(config.errors);
const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
const emitted = program.emit(undefined, undefined, undefined, false, { before: [relativeFieldforge] });
const errors = [...program.getSyntacticDiagnostics(), ...emitted.diagnostics];
if (emitted.emitSkipped || errors.length) fail(errors);

for (const dir of SOURCE_DIRS) await linkAssets(join(ROOT, dir), join(partial, dir));
for (const name of ['web', 'package.json']) await symlink(relative(partial, join(ROOT, name)), join(partial, name));
await writeFile(join(partial, STAMP_FILE), stampText(started));

const old = join(ROOT, `dist.old-${process.pid}`);
if (existsSync(OUT)) await rename(OUT, old);
await rename(partial, OUT);
await rm(old, { recursive: true, force: true });
console.log(`fieldforge: compiled ${config.fileNames.length} files into dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);

/**
 * Symlinks every file of `from` that is not TypeScript into `to`, at the same relative path. A
 * module's `web/` folder (browser code, never compiled) is linked whole, as the top-level `web/`
 * is: served files must really lie inside the folder served (src/http/asset-folder.ts).
 */
async function linkAssets(from, to) {
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (entry.isDirectory() && /^modules\/[^/]+\/web$/.test(relative(ROOT, source).split(sep).join('/'))) {
      await mkdir(to, { recursive: true });
      await symlink(relative(to, source), join(to, entry.name));
    } else if (entry.isDirectory()) {
      await linkAssets(source, join(to, entry.name));
    } else if (!entry.name.endsWith('.ts')) {
      await mkdir(to, { recursive: true });
      await symlink(relative(to, source), join(to, entry.name));
    }
  }
}

/** Rewrites `'fieldforge'` module specifiers to the relative path of src/index.js. */
function relativeFieldforge(context) {
  const f = context.factory;
  return (file) => {
    let target = relative(dirname(file.fileName), join(ROOT, 'src', 'index.js')).split(sep).join('/');
    if (!target.startsWith('.')) target = `./${target}`;
    const isFieldforge = (node) => node && ts.isStringLiteral(node) && node.text === 'fieldforge';
    const visit = (node) => {
      if (ts.isImportDeclaration(node) && isFieldforge(node.moduleSpecifier)) {
        return f.updateImportDeclaration(node, node.modifiers, node.importClause, f.createStringLiteral(target), node.attributes);
      }
      if (ts.isExportDeclaration(node) && isFieldforge(node.moduleSpecifier)) {
        return f.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, f.createStringLiteral(target), node.attributes);
      }
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && isFieldforge(node.arguments[0])) {
        return f.updateCallExpression(node, node.expression, node.typeArguments, [f.createStringLiteral(target), ...node.arguments.slice(1)]);
      }
      return ts.visitEachChild(node, visit, context);
    };
    return ts.visitNode(file, visit);
  };
}

function fail(diagnostics) {
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
  console.error(ts.formatDiagnostics(diagnostics, host));
  console.error('fieldforge: the build failed; fieldforge runs from its sources until it succeeds');
  rmSync(partial, { recursive: true, force: true });
  // A failed build must not fail the install: the sources still run (through tsx).
  process.exit(0);
}
