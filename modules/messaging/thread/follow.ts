/**
 * Making contacts follow records and stop following them, set-based: one statement whatever the
 * number of records and contacts (Odoo inserted followers one by one, 0.107 s per 100, before
 * batching them). Following twice is following once (`ON CONFLICT DO NOTHING` on the unique
 * `(model, document, contact)`), so concurrent assignments never fail on each other.
 */
import { currentEnv, sql } from 'fieldforge';

export interface FollowPair {
  readonly document: number;
  readonly contact: number;
}

/** Makes each pair's contact follow its record of `model`; answers how many rows were new. */
export async function addFollowers(model: string, pairs: readonly FollowPair[]): Promise<number> {
  const unique = new Map(pairs.filter((p) => p.contact && p.document).map((p) => [`${p.document}:${p.contact}`, p]));
  if (!unique.size) return 0;
  const { registry, work, uid } = currentEnv();
  const meta = registry.meta('Followers');
  const column = (f: string) => sql.id(meta.fields.get(f)!.column!);
  const now = new Date().toISOString();
  const list = [...unique.values()];
  const result = await sql`INSERT INTO ${sql.table(meta.table)}
      (${column('model')}, ${column('document')}, ${column('contact')}, ${column('created_date')}, ${column('created_by')}, ${column('updated_date')}, ${column('updated_by')})
    SELECT ${model}::varchar, u.document, u.contact, ${now}::timestamptz, ${uid}::int, ${now}::timestamptz, ${uid}::int
      FROM unnest(${list.map((p) => p.document)}::int[], ${list.map((p) => p.contact)}::int[]) AS u(document, contact)
    ON CONFLICT (${column('model')}, ${column('document')}, ${column('contact')}) DO NOTHING`.execute(work.trx);
  return Number(result.numAffectedRows ?? 0);
}

/** Stops `contact` following records `documents` of `model`; answers how many rows went. */
export async function removeFollowers(model: string, documents: readonly number[], contact: number): Promise<number> {
  if (!documents.length) return 0;
  const { registry, work } = currentEnv();
  const meta = registry.meta('Followers');
  const column = (f: string) => sql.id(meta.fields.get(f)!.column!);
  const result = await sql`DELETE FROM ${sql.table(meta.table)}
    WHERE ${column('model')} = ${model} AND ${column('document')} = ANY(${[...documents]}::int[]) AND ${column('contact')} = ${contact}`.execute(work.trx);
  return Number(result.numAffectedRows ?? 0);
}
