/**
 * One way to build SQL (issue 26): Kysely is an engine detail of `src/db`. No file of `src/` outside
 * `src/db`, and no module under `modules/`, imports `kysely` (or a `kysely-*` package, or a
 * `kysely/…` path) — neither a value nor a type, statically, dynamically or in a type query. They
 * build SQL with the `sql` tag of `src/db/sql-fragment.ts` (module code: `import { sql } from
 * 'fieldforge'`) and type database handles as `SqlExecutor`. Fails naming each file and line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KYSELY = /^kysely(?:$|[/-])/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
    return /\.(?:[cm]?ts|[cm]?js)$/.test(entry.name) ? [full] : [];
  });
}

/** `line: specifier` of every import of Kysely in `text` (imports, re-exports, `import()`, `require`). */
function kyselyImports(text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .filter((f) => KYSELY.test(f.fileName))
    .map((f) => `${text.slice(0, f.pos).split('\n').length}: '${f.fileName}'`);
}

describe('Kysely stays inside src/db', () => {
  it('is imported by no file of src/ outside src/db, nor by any module', () => {
    const dbDir = join(ROOT, 'src', 'db') + sep;
    const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'modules'))].filter((f) => !f.startsWith(dbDir));
    expect(files.length).toBeGreaterThan(100); // the walk found the tree
    const offenders = files.flatMap((file) =>
      kyselyImports(readFileSync(file, 'utf8')).map((hit) => `${relative(ROOT, file)}:${hit}`));
    expect(offenders, `build SQL with the sql tag of src/db/sql-fragment.ts and type handles as SqlExecutor (src/db/sql-executor.ts):\n${offenders.join('\n')}`).toEqual([]);
  });

  it('sees every form of import (the check itself)', () => {
    const text = [
      "import { sql } from 'kysely';",
      "import type { Kysely } from \"kysely\";",
      "export { CompiledQuery } from 'kysely';",
      "type K = import('kysely').Kysely<any>;",
      "const lazy = () => import('kysely');",
      "import { PGliteDialect } from 'kysely-pglite-dialect';",
      "import { jsonArrayFrom } from 'kysely/helpers/postgres';",
      "const k = require('kysely');",
      "import { sql as ours } from '../db/sql-fragment.js';",
      "import { kyselyish } from 'not-kysely';",
      "// import { sql } from 'kysely'; (a comment is no import)",
    ].join('\n');
    expect(kyselyImports(text)).toEqual([
      "1: 'kysely'", "2: 'kysely'", "3: 'kysely'", "4: 'kysely'", "5: 'kysely'",
      "6: 'kysely-pglite-dialect'", "7: 'kysely/helpers/postgres'", "8: 'kysely'",
    ]);
  });
});
