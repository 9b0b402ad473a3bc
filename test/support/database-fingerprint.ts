/**
 * Proof that a call wrote nothing: every table's row count and a checksum of its rows, taken
 * before and after. The credential tables are left out: resolving an API key stamps its
 * `last_used_at` (at most once a minute), which is the credential's bookkeeping, not the call's.
 */
import { sql } from 'kysely';
import { currentEnv } from '../../src/orm/env.js';
import type { TestDatabase } from './test-database.js';

const BOOKKEEPING = new Set(['api_key', 'auth_session']);

/** `table → "<rows>:<md5 of the rows in id order>"` for every table of the database. */
export async function databaseFingerprint(t: TestDatabase): Promise<Record<string, string>> {
  return t.run(async () => {
    const trx = currentEnv().work.trx;
    const { rows: tables } = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`.execute(trx);
    const out: Record<string, string> = {};
    for (const { name } of tables) {
      if (BOOKKEEPING.has(name)) continue;
      const { rows: [row] } = await sql<{ n: number; sum: string | null }>`SELECT count(*)::int AS n,
        md5(string_agg(t::text, '|' ORDER BY t::text)) AS sum FROM ${sql.table(name)} t`.execute(trx);
      out[name] = `${row!.n}:${row!.sum ?? ''}`;
    }
    return out;
  });
}

/** The statements of a list that change data (INSERT, UPDATE, DELETE, also inside a WITH). */
export function writeStatements(statements: readonly string[]): string[] {
  return statements.filter((s) => /\b(insert\s+into|update\s+"?\w+"?(\s+as\s+\w+)?\s+set|delete\s+from)\b/i.test(s));
}
