/**
 * Applying the module marks of Settings > Modules (`api/module-catalogue.ts`): when a started
 * `fieldforge serve` first opens a database (before serving it), it installs the modules marked
 * `install` and upgrades those marked `upgrade`, in one install (`Platform.install`), then clears
 * the marks it applied. A failed install leaves its marks, so the next start tries again and the
 * screen still shows them. The command line's `--init` / `--update` clear the marks they satisfy too.
 */
import type { InstallResult } from '../modules/installer.js';
import { QuerySet } from '../orm/queryset.js';
import { currentEnv } from '../orm/env.js';
import { hasPendingColumn, markedModuleCount, markedModuleRows, type MarkedModule } from '../orm/system/module-marks.js';
import type { Platform } from './platform.js';

export interface PendingMarks {
  install: string[];
  upgrade: string[];
}

/** The marks recorded in `dbName` (none in a database whose core predates them). */
export async function pendingMarks(platform: Platform, dbName: string): Promise<PendingMarks> {
  return marksOf(await markedModules(platform, dbName));
}

/** Installs and upgrades what `dbName` has marked; null when nothing was marked. */
export async function applyPendingModules(platform: Platform, dbName: string): Promise<InstallResult | null> {
  const marked = await markedModules(platform, dbName);
  // The common case, on every first open of a database by `serve`: no mark, nothing more to ask.
  if (!marked.length) return null;
  const marks = marksOf(marked);
  if (!marks.install.length && !marks.upgrade.length) {
    // Install marks on modules the command line installed meanwhile are done: cleared.
    await clearMarks(platform, dbName, { installed: [], updated: [] });
    return null;
  }
  const result = await platform.install(dbName, { init: marks.install, update: marks.upgrade });
  await clearMarks(platform, dbName, { installed: [...marks.install, ...result.installed], updated: marks.upgrade });
  return result;
}

async function markedModules(platform: Platform, dbName: string): Promise<MarkedModule[]> {
  const db = await platform.database(dbName);
  if (!(await hasPendingColumn(db.executor))) return [];
  return markedModuleRows(db.executor);
}

/** The marks still to apply: `install` on a module not installed, `upgrade` on an installed one. */
function marksOf(rows: readonly MarkedModule[]): PendingMarks {
  return {
    install: rows.filter((r) => r.pending === 'install' && r.state !== 'installed').map((r) => r.identifier),
    upgrade: rows.filter((r) => r.pending === 'upgrade' && r.state === 'installed').map((r) => r.identifier),
  };
}

/**
 * Clears the marks an install satisfied: `install` on every module now installed, `upgrade` on
 * the modules just installed or upgraded.
 */
export async function clearMarks(platform: Platform, dbName: string, done: { installed: readonly string[]; updated: readonly string[] }): Promise<void> {
  const db = await platform.database(dbName);
  if (!(await hasPendingColumn(db.executor))) return;
  // Most starts find no mark at all: then no registry is built for nothing.
  if (!(await markedModuleCount(db.executor))) return;
  const refreshed = [...new Set([...done.installed, ...done.updated])];
  await platform.run(dbName, {}, async () => {
    const meta = currentEnv().registry.meta('Module');
    await new QuerySet(meta).filter({ pending: 'install', state: 'installed' }).update({ pending: null });
    if (refreshed.length) await new QuerySet(meta).filter({ pending: 'upgrade', identifier__in: refreshed }).update({ pending: null });
  });
}
