/**
 * Issue 26 item 4: outside `src/orm` and `src/db` no code writes SQL against a model table — auth,
 * files, platform, modules and routes reach their rows through querysets or the ORM's system
 * stores (`src/orm/system`). Every table of every model of every built-in module (join tables
 * included) is looked for in every other file of `src/` (`test/support/sql-table-scan.ts`): named
 * in SQL text or by a literal, or any table interpolated into raw SQL. A finding fails the test
 * with its file and line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { buildRegistry } from '../../src/modules/installer.js';
import { ManyToManyField } from '../../src/orm/fields/relational-fields.js';
import { scanSqlTables, type Finding } from '../support/sql-table-scan.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where SQL on model tables belongs. */
const OWNERS = ['src/orm/', 'src/db/'];

/**
 * The files that still write SQL on model tables, each with why. An entry whose file no longer
 * does fails too, so the list only shrinks.
 */
const EXCEPTIONS: Record<string, string> = {
  'src/modules/schema-sync.ts':
    'DDL of the model tables themselves (and the checks and backfills of their rows a new constraint needs), on the tables as the database has them before the new registry holds',
  'src/access/reference-checks.ts':
    "a predicate naming the written table, compiled into the ORM's own INSERT or UPDATE",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every table of the built-in modules' models: theirs and their ManyToMany join tables. */
async function modelTables(): Promise<Set<string>> {
  const catalog = await ModuleCatalog.scan([BUILTIN_MODULES_DIR]);
  const registry = await buildRegistry(catalog, [...catalog.modules.keys()]);
  const tables = new Set<string>();
  for (const meta of registry.models.values()) {
    tables.add(meta.table);
    for (const field of meta.fields.values()) if (field instanceof ManyToManyField) tables.add(field.join.table);
  }
  return tables;
}

const describeFinding = (file: string, f: Finding) =>
  `${file}:${f.line}: ${f.kind === 'interpolated' ? `a table interpolated into raw SQL (${f.what.replace(/\s+/g, ' ')})` : `model table '${f.what}' named (${f.kind})`}`;

describe('model tables outside src/orm and src/db', () => {
  let tables: Set<string>;
  const findings = new Map<string, Finding[]>();

  beforeAll(async () => {
    tables = await modelTables();
    for (const path of sourceFiles(join(ROOT, 'src'))) {
      const file = relative(ROOT, path).split('\\').join('/');
      if (OWNERS.some((owner) => file.startsWith(owner))) continue;
      const found = scanSqlTables(file, readFileSync(path, 'utf8'), tables);
      if (found.length) findings.set(file, found);
    }
  });

  it('knows the tables of every built-in model', () => {
    for (const table of ['user', 'api_key', 'auth_session', 'attachment', 'ff_attachment_removal', 'module', 'user_groups_rel', 'project_task']) {
      expect(tables).toContain(table);
    }
  });

  it('no file outside src/orm and src/db writes SQL against a model table', () => {
    const offending = [...findings].filter(([file]) => !(file in EXCEPTIONS))
      .flatMap(([file, found]) => found.map((f) => describeFinding(file, f)));
    expect(offending, `Reach these rows through a queryset or a store in src/orm/system:\n${offending.join('\n')}`).toEqual([]);
  });

  it('every exception still needs its entry', () => {
    const stale = Object.keys(EXCEPTIONS).filter((file) => !findings.has(file));
    expect(stale, 'These files no longer write SQL on model tables: remove their entries').toEqual([]);
  });
});

describe('the scan', () => {
  const tables = new Set(['user', 'attachment', 'module', 'api_key']);
  const scan = (source: string) => scanSqlTables('sample.ts', source, tables).map((f) => `${f.line} ${f.kind} ${f.what}`);

  it('finds tables named in SQL text, by literal, and interpolated, with their lines', () => {
    expect(scan([
      "const a = await sql`SELECT 1 FROM attachment WHERE filepath = ${key}`.execute(db);",
      'const b = sql<{ n: number }>`',
      '  SELECT u.id FROM ff_state s',
      '  LEFT JOIN "user" u ON u.id = ${uid}`;',
      "const c = kyselySql`SELECT to_regclass('public.module')`;",
      'const d = sql`UPDATE ${sql.table(meta.table)} SET x = 1`;',
      "const e = sql`INSERT INTO ${sql.id('api_key')} DEFAULT VALUES`;",
      "const f = db.selectFrom('attachment').selectAll();",
      'const g = sql`SELECT ${sql.id(meta.table, column)} FROM ${from}`;',
    ].join('\n'))).toEqual([
      '1 table attachment',
      '4 table user',
      '5 table module',
      '6 interpolated sql.table(meta.table)',
      '7 helper api_key',
      '8 helper attachment',
      '9 interpolated sql.id(meta.table, column)',
    ]);
  });

  it('leaves names that are not SQL on a table alone', () => {
    expect(scan([
      '// SELECT id FROM attachment (a comment)',
      "const disposition = `${action === 'download' ? 'attachment' : 'inline'}; filename=x`;",
      "throw new Error('No user FROM attachment');",
      'const q = sql`SELECT u.user_id, a.module_name FROM ${from} WHERE attachment_id = ${id}`;',
      "const s = sql`SELECT 1 FROM attachments_archive JOIN users ON true`;",
    ].join('\n'))).toEqual([]);
  });
});
