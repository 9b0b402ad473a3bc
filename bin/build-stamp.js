// The compiled tree's stamp: written by `bin/build.js` into `dist/`, read by `bin/fieldforge.js`
// to tell whether `dist/` still matches the sources. A developer who edits a file must never run
// stale code, so anything newer than the build — a TypeScript file, a directory (a file added,
// removed or renamed), the build's own configuration — makes the build stale.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP_FILE = '.build-stamp';

/** What the build compiles: changes under these make `dist/` stale. */
export const SOURCE_DIRS = ['src', 'modules'];

/** Files whose change changes what the build emits. */
export const BUILD_INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'bin/build.js'];

/** The stamp's content: the time the build started reading the sources (ms since the epoch). */
export function stampText(sourcesAsOf) {
  return `${JSON.stringify({ sourcesAsOf })}\n`;
}

/**
 * Whether `<root>/<outDir>` was built from the sources as they are now: its stamp exists and no
 * source file or directory changed since the build read them. Costs one `stat` per TypeScript
 * file and directory (a few milliseconds).
 */
export function isFresh(root, outDir = 'dist') {
  let asOf;
  try {
    asOf = JSON.parse(readFileSync(join(root, outDir, STAMP_FILE), 'utf8')).sourcesAsOf;
  } catch {
    return false;
  }
  if (typeof asOf !== 'number') return false;
  try {
    for (const file of BUILD_INPUTS) if (statSync(join(root, file)).mtimeMs > asOf) return false;
    for (const dir of SOURCE_DIRS) if (changedSince(join(root, dir), asOf)) return false;
  } catch {
    return false;
  }
  return true;
}

function changedSince(dir, asOf) {
  if (statSync(dir).mtimeMs > asOf) return true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (changedSince(path, asOf)) return true;
    } else if (entry.name.endsWith('.ts') && statSync(path).mtimeMs > asOf) {
      return true;
    }
  }
  return false;
}
