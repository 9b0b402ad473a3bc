/**
 * The `fieldforge` command line (ARCHITECTURE §2). Thin: parse, call the platform, print.
 *
 * Each command imports what it runs when it runs: the HTTP server alone costs ~0.2 s of module
 * loading and the platform ~0.3 s, which `--help`, `db list` or a clone (issue 29: well under a
 * second) should not pay for what they do not use.
 */
import { Command, InvalidArgumentError } from 'commander';
import { readSettings } from '../config/settings.js';
import { FieldForgeError } from '../errors.js';
import type { Engine } from '../db/engine.js';
import type { FileService } from '../files/file-service.js';
import type { Platform } from '../platform/platform.js';

const settings = readSettings();

const list = (v: string): string[] => v.split(',').map((s) => s.trim()).filter(Boolean);
const int = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number');
  return n;
};

async function withPlatform<T>(fn: (p: Platform) => Promise<T>): Promise<T> {
  const { bootPlatform } = await import('../platform/boot.js');
  const platform = await bootPlatform(settings);
  try {
    return await fn(platform);
  } finally {
    await platform.close();
  }
}

/** The engine and the file store alone, for a command that needs nothing of the platform (a clone). */
async function withEngine<T>(fn: (engine: Engine, files: FileService) => Promise<T>): Promise<T> {
  const [{ engineFromSettings }, { fileServiceFromSettings }] = await Promise.all([
    import('../platform/engine-from-settings.js'), import('../files/filestore-config.js'),
  ]);
  const engine = engineFromSettings(settings);
  try {
    return await fn(engine, fileServiceFromSettings(settings));
  } finally {
    await engine.close();
  }
}

const program = new Command('fieldforge')
  .description('FieldForge business application platform')
  .option('--db <name>', 'database to work on (also -db)')
  .option('--init <modules>', 'install modules (comma-separated) into --db, then exit', list)
  .option('--update <modules>', 'upgrade installed modules in --db, then exit', list)
  .action(async (opts: { db?: string; init?: string[]; update?: string[] }) => {
    if (!opts.init && !opts.update) return program.help();
    if (!opts.db) throw new FieldForgeError('--init/--update need -db NAME');
    const { clearMarks } = await import('../platform/pending-modules.js');
    const result = await withPlatform(async (p) => {
      const installed = await p.install(opts.db!, { init: opts.init, update: opts.update });
      // What Settings > Modules had marked and this command did is no longer pending.
      await clearMarks(p, opts.db!, installed);
      return installed;
    });
    for (const w of result.warnings) console.warn(`warning: ${w}`);
    console.log(`Database '${opts.db}': installed [${result.installed.join(', ')}], upgraded [${result.updated.join(', ')}]`);
  });

program.command('serve')
  .description('serve the platform over HTTP')
  .option('--port <port>', 'listen port', int, settings.port)
  .option('--host <host>', 'listen address', settings.host)
  .option('--workers <n>', 'worker processes', int, 1)
  .action(async (opts: { port: number; host: string; workers: number }) => (await import('./serve.js')).serve(settings, opts));

const db = program.command('db').description('create, list, drop and clone databases');
db.command('create <name>')
  .option('--admin-email <email>', 'administrator e-mail', 'admin@example.com')
  .option('--admin-password <password>', 'administrator password (generated when absent)')
  .option('--modules <modules>', 'modules to install besides core', list, [])
  .option('--currency <code>', 'base currency of the first company (default USD)')
  .action(async (name: string, opts: { adminEmail: string; adminPassword?: string; modules: string[]; currency?: string }) => {
    const { createDatabase } = await import('../platform/database-lifecycle.js');
    const created = await withPlatform((p) => createDatabase(p, name, {
      modules: opts.modules, adminEmail: opts.adminEmail, adminPassword: opts.adminPassword ?? (process.env.FF_ADMIN_PASSWORD || undefined),
      currency: opts.currency,
    }));
    console.log(`Created database '${name}' with modules ${created.installed.join(', ')}`);
    console.log(`Admin login: ${created.adminEmail} / ${created.adminPassword}`);
  });
db.command('list').action(async () => {
  for (const name of await withPlatform((p) => p.engine.list())) console.log(name);
});
db.command('drop <name>').action(async (name: string) => {
  const { dropDatabase } = await import('../platform/database-lifecycle.js');
  await withPlatform((p) => dropDatabase(p, name));
  console.log(`Dropped database '${name}'`);
});
db.command('clone <source> <target>').action(async (source: string, target: string) => {
  const { cloneOnEngine } = await import('../platform/clone-database.js');
  await withEngine((engine, files) => cloneOnEngine(engine, files, source, target));
  console.log(`Cloned '${source}' into '${target}'`);
});

program.command('apikey')
  .description('API keys for programs')
  .command('create')
  .requiredOption('--name <label>', 'label of the key and its service account')
  .option('--groups <groups>', 'group identifiers', list, ['core.group_user'])
  .option('--expires <date>', 'expiry date YYYY-MM-DD')
  .action(async (opts: { name: string; groups: string[]; expires?: string }) => {
    const dbName = program.opts<{ db?: string }>().db;
    if (!dbName) throw new FieldForgeError('apikey create needs -db NAME');
    if (opts.expires && !/^\d{4}-\d{2}-\d{2}$/.test(opts.expires)) throw new FieldForgeError('--expires takes YYYY-MM-DD');
    const { createServiceAccountKey } = await import('../auth/api-keys.js');
    const created = await withPlatform((p) => p.run(dbName, {}, () =>
      createServiceAccountKey({ name: opts.name, groups: opts.groups, expiresAt: opts.expires ? `${opts.expires}T00:00:00Z` : null })));
    console.log(`API key '${opts.name}' for database '${dbName}' (prefix ${created.prefix}); it is shown only once:`);
    console.log(created.key);
  });
program.command('files')
  .description('the file store')
  .command('sweep')
  .description('remove the stored bytes queued for removal (the server also sweeps by itself)')
  .action(async () => {
    const dbName = program.opts<{ db?: string }>().db;
    if (!dbName) throw new FieldForgeError('files sweep needs -db NAME');
    const { sweep } = await import('../files/file-removal.js');
    const result = await withPlatform(async (p) => sweep(await p.database(dbName), p.files));
    console.log(`Database '${dbName}': removed ${result.removed.length} file(s), ${result.kept.length} still in use or busy`);
  });
program.enablePositionalOptions(false);

// `-db NAME` (one dash, two letters) cannot be declared with commander: rewrite it first.
const argv = process.argv.map((a) => (a === '-db' ? '--db' : a.startsWith('-db=') ? `--db=${a.slice(4)}` : a));
try {
  await program.parseAsync(argv);
} catch (err) {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = err instanceof FieldForgeError ? 2 : 1;
}
