/**
 * The Settings > Modules screen's service (spec §2.7): the catalogue of modules this server can
 * install, each with its state in the current database, and the marks an administrator sets on
 * them. A mark is not an install: code is loaded when the server starts, so `install` / `upgrade`
 * are recorded on the database's `Module` row (`pending`) and applied by the next start
 * (`platform/pending-modules.ts`), or at once by the command line. Reading needs the `read` right
 * on Module; marking needs `create` and `write` (administrators').
 */
import { assertRight } from '../access/record-access.js';
import { BadRequest, NotFound } from '../errors.js';
import type { ModuleCatalog } from '../modules/module-catalog.js';
import { dependencyOrder } from '../modules/dependency-order.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';
import { createRecords } from '../orm/write/create-records.js';
import { deleteRecords } from '../orm/write/delete-records.js';
import { writeRecords } from '../orm/write/write-records.js';

export type PendingAction = 'install' | 'upgrade';

/** One module of the catalogue, as the screen shows it. */
export interface CatalogueEntry {
  identifier: string;
  name: string;
  category: string;
  description: string;
  icon: string;
  color: string;
  dependencies: string[];
  state: 'installed' | 'uninstalled';
  /** What the next start does to it; null = nothing. */
  pending: PendingAction | null;
  /**
   * A module not installed that the next start installs anyway, because modules marked for
   * installation need it: their identifiers (Sales marked → Contacts is `needed_by: ['sales']`).
   */
  needed_by: string[];
  installed_date: string | null;
  /** False for a module recorded in the database whose directory this server no longer has. */
  available: boolean;
}

/** The answer to a mark: what will happen, and how to make it happen now. */
export interface MarkAnswer {
  module: CatalogueEntry;
  /** Modules not yet installed that an install brings along (dependencies), in install order. */
  with_dependencies: string[];
  message: string;
  command: string;
}

const ROW_FIELDS = ['identifier', 'name', 'category', 'description', 'icon', 'color', 'dependencies', 'state', 'pending', 'installed_date'];

/** The command that applies `action` on `modules` now (the server is restarted afterwards). */
export function cliCommand(dbName: string, action: PendingAction, modules: readonly string[]): string {
  return `npx fieldforge -db ${dbName} ${action === 'install' ? '--init' : '--update'} ${modules.join(',')}`;
}

/** Every module of the catalogue (and any installed one the catalogue lost), by name. */
export async function moduleCatalogue(catalog: ModuleCatalog): Promise<CatalogueEntry[]> {
  const meta = currentEnv().registry.meta('Module');
  assertRight(meta, 'read');
  const rows = new Map((await new QuerySet(meta).read(ROW_FIELDS)).map((r) => [r.identifier as string, r]));
  const entries: CatalogueEntry[] = [];
  for (const { manifest } of catalog.modules.values()) entries.push(entryOf(manifest.identifier, catalog, rows.get(manifest.identifier)));
  for (const [identifier, row] of rows) if (!catalog.modules.has(identifier)) entries.push(entryOf(identifier, catalog, row));
  noteNeeds(catalog, entries);
  return entries.sort((a, b) => a.name.localeCompare(b.name) || a.identifier.localeCompare(b.identifier));
}

/** One entry (404 when neither the catalogue nor the database knows it); the catalogue is small. */
export async function catalogueEntry(catalog: ModuleCatalog, identifier: string): Promise<CatalogueEntry> {
  const entry = (await moduleCatalogue(catalog)).find((e) => e.identifier === identifier);
  if (!entry) throw new NotFound(`No module '${identifier.slice(0, 80)}' in the catalogue`);
  return entry;
}

/**
 * Fills `needed_by`: the modules not installed that an install mark brings along, as the next
 * start resolves them (dependencies first, transitively).
 */
function noteNeeds(catalog: ModuleCatalog, entries: CatalogueEntry[]): void {
  const byId = new Map(entries.map((e) => [e.identifier, e]));
  for (const marked of entries.filter((e) => e.pending === 'install')) {
    let order: string[];
    try {
      order = dependencyOrder(catalog, [marked.identifier]);
    } catch {
      continue; // a dependency this server lacks: the mark's own answer said so
    }
    for (const id of order) {
      const needed = byId.get(id);
      if (id !== marked.identifier && needed && needed.state !== 'installed') needed.needed_by.push(marked.identifier);
    }
  }
}

/**
 * Marks a module for installation (with the dependencies it needs) or an installed one for
 * upgrade. Marking twice is harmless; marking for install what is installed, or for upgrade what
 * is not, is a 400 saying what to do instead.
 */
export async function markModule(catalog: ModuleCatalog, identifier: string, action: PendingAction, dbName: string): Promise<MarkAnswer> {
  const meta = currentEnv().registry.meta('Module');
  assertRight(meta, 'create');
  assertRight(meta, 'write');
  const descriptor = catalog.modules.get(identifier);
  if (!descriptor) throw new NotFound(`No module '${identifier.slice(0, 80)}' in the catalogue`);
  const manifest = descriptor.manifest;
  const [row] = await new QuerySet(meta).filter({ identifier }).read(['state', 'pending']);
  const installed = row?.state === 'installed';
  if (action === 'install' && installed) throw new BadRequest(`Module '${identifier}' is already installed; upgrade it instead`);
  if (action === 'upgrade' && !installed) throw new BadRequest(`Module '${identifier}' is not installed; install it instead`);
  const installedNow = new Set(
    (await new QuerySet(meta).filter({ state: 'installed' }).read(['identifier'])).map((r) => r.identifier as string),
  );
  // Checked now, not at the next start: a dependency this server lacks is said at once.
  const order = dependencyOrder(catalog, [identifier]);
  const withDependencies = action === 'install' ? order.filter((id) => id !== identifier && !installedNow.has(id)) : [];
  // Elevated for the row itself: `pending` and `state` are the platform's to set, not the API's.
  await withEnv({ su: true }, async () => {
    if (row) await writeRecords(meta, [row.id as number], { pending: action });
    else {
      await createRecords(meta, [{
        identifier, name: manifest.name, category: manifest.category, description: manifest.description, icon: manifest.icon,
        color: manifest.color, dependencies: manifest.dependencies, state: 'uninstalled', pending: action,
      }]);
    }
  });
  const command = cliCommand(dbName, action, [identifier]);
  const also = withDependencies.length ? ` (with ${withDependencies.join(', ')})` : '';
  const what = action === 'install' ? `marked for installation${also}` : 'marked for upgrade';
  return {
    module: await catalogueEntry(catalog, identifier),
    with_dependencies: withDependencies,
    message: `${manifest.name} is ${what}. Restart the server to apply, or run: ${command}`,
    command,
  };
}

/** Takes a mark back: a module marked for install goes back to the plain catalogue. */
export async function cancelMark(catalog: ModuleCatalog, identifier: string): Promise<CatalogueEntry> {
  const meta = currentEnv().registry.meta('Module');
  assertRight(meta, 'write');
  const [row] = await new QuerySet(meta).filter({ identifier }).read(['state', 'pending']);
  if (!row && !catalog.modules.has(identifier)) throw new NotFound(`No module '${identifier.slice(0, 80)}' in the catalogue`);
  if (row?.pending) {
    await withEnv({ su: true }, () => (row.state === 'uninstalled' ? deleteRecords(meta, [row.id as number]) : writeRecords(meta, [row.id as number], { pending: null })));
  }
  return catalogueEntry(catalog, identifier);
}

function entryOf(identifier: string, catalog: ModuleCatalog, row: Record<string, unknown> | undefined): CatalogueEntry {
  const manifest = catalog.modules.get(identifier)?.manifest;
  const state = row?.state === 'installed' ? 'installed' : 'uninstalled';
  const pending = (row?.pending as PendingAction | null | undefined) ?? null;
  return {
    identifier,
    name: manifest?.name ?? (row?.name as string) ?? identifier,
    category: manifest?.category ?? (row?.category as string | null) ?? '',
    description: manifest?.description ?? (row?.description as string | null) ?? '',
    icon: manifest?.icon ?? (row?.icon as string | null) ?? '',
    color: manifest?.color ?? (row?.color as string | null) ?? '',
    dependencies: [...(manifest?.dependencies ?? (row?.dependencies as string[] | null) ?? [])],
    state,
    // An install mark on a module installed meanwhile (from the command line) is done already.
    pending: pending === 'install' && state === 'installed' ? null : pending,
    needed_by: [],
    installed_date: state === 'installed' ? ((row?.installed_date as string | null) ?? null) : null,
    available: manifest !== undefined,
  };
}
