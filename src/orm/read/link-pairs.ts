/**
 * The links of a ManyToMany as stored: its join table's rows for some source records, whoever may
 * read the targets (a caller filters them by what it may read — a clone copies only the links to
 * records its caller can see).
 */
import { sql } from '../../db/sql-fragment.js';
import { runSql } from '../execute-sql.js';
import type { ManyToManyField } from '../fields/relational-fields.js';

export interface LinkPair {
  source: number;
  target: number;
}

/** Every link of `field` from the records `sourceIds`, in one statement. */
export function linkPairs(field: ManyToManyField, sourceIds: readonly number[]): Promise<LinkPair[]> {
  const j = field.join;
  return runSql<LinkPair>(sql`SELECT ${sql.id(j.sourceColumn)} AS source,
    ${sql.id(j.targetColumn)} AS target FROM ${sql.table(j.table)} WHERE ${sql.id(j.sourceColumn)} = ANY(${[...sourceIds]}::int[])`);
}
