/**
 * The platform's own reads of attachment rows — serving a file, and the bookkeeping of stored
 * bytes (`files/release-keys.ts`, `files/file-removal.ts`). They read rows whoever asks: the caller
 * decides who may see what (the file routes check the owning record through the ORM's read). Most
 * run where no unit of work exists — a file request before its credential, the sweep, a clone's
 * markers, on any database's pool — so each takes where to run, and the table is named as the core
 * model declares it. Each is one statement.
 */
import type { SqlExecutor } from '../../db/sql-executor.js';
import { sql } from '../../db/sql-fragment.js';

/** What serving an attachment's bytes needs, and deciding who may read them. */
export interface AttachmentFile {
  id: number;
  name: string;
  filepath: string | null;
  mimetype: string | null;
  is_public: boolean;
  checksum: string | null;
  model: string | null;
  record: number | null;
}

export async function attachmentFile(db: SqlExecutor, id: number): Promise<AttachmentFile | undefined> {
  return (await sql<AttachmentFile>`SELECT id, name, filepath, mimetype, is_public, checksum, model, record
    FROM attachment WHERE id = ${id}`.execute(db)).rows[0];
}

/** Whether some attachment row of `db` names storage key `key`. */
export async function keyInUse(db: SqlExecutor, key: string): Promise<boolean> {
  return (await sql`SELECT 1 FROM attachment WHERE filepath = ${key} LIMIT 1`.execute(db)).rows.length > 0;
}

/** The owners (first path segment: a database name) of every key `db`'s rows reference. */
export async function keyOwners(db: SqlExecutor): Promise<string[]> {
  const { rows } = await sql<{ owner: string }>`SELECT DISTINCT split_part(filepath, '/', 1) AS owner FROM attachment
    WHERE filepath IS NOT NULL`.execute(db);
  return rows.map((r) => r.owner);
}

/** Which of `keys` rows other than `leavingIds` still use. */
export async function keysStillUsed(db: SqlExecutor, keys: readonly string[], leavingIds: readonly number[]): Promise<Set<string>> {
  const used = await sql<{ filepath: string }>`SELECT DISTINCT filepath FROM attachment
    WHERE filepath = ANY(${keys}) AND NOT (id = ANY(${[...leavingIds]}::int[]))`.execute(db);
  return new Set(used.rows.map((r) => r.filepath));
}

/** The storage keys attachments `ids` use. */
export async function storedKeysOf(db: SqlExecutor, ids: readonly number[]): Promise<string[]> {
  const rows = await sql<{ filepath: string }>`SELECT DISTINCT filepath FROM attachment
    WHERE id = ANY(${[...ids]}::int[]) AND filepath IS NOT NULL`.execute(db);
  return rows.rows.map((r) => r.filepath);
}
