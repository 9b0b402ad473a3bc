/**
 * Which fields of which records an update changed, for record-changed pings (`../record-changes.ts`).
 * Nothing happens unless the unit of work has a change feed whose per-database gate is lit: a
 * write to an unwatched database pays one cached check and not one statement more. Lit, the
 * written columns are read before the UPDATE (one SELECT), the UPDATE returns them after (extra
 * RETURNING columns), and the link sets of written ManyToMany fields are read before they are
 * replaced (one SELECT per field). A field counts when its value differs; the audit columns never
 * count; a written OneToMany counts as changed (its lines, updated, report their own changes).
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import { currentEnv, type Env } from '../env.js';
import { runGuarded, runSql } from '../execute-sql.js';
import type { Field } from '../fields/field.js';
import type { ManyToManyField } from '../fields/relational-fields.js';
import { AUDIT_FIELDS } from '../generic-fields.js';
import type { ModelMeta } from '../model-meta.js';
import type { RecordChangeFeed } from '../record-changes.js';
import type { SortedValues } from './write-values.js';

/** A lit write's bookkeeping between its UPDATE and the end of the write. */
export interface ChangeTrack {
  /** Extra RETURNING columns: the written columns' values after the UPDATE. */
  readonly returning: SqlFragment;
  /** Records, from the UPDATE's rows, the fields whose value changed. */
  finish(updated: readonly Record<string, unknown>[]): void;
}

const AUDIT = new Set<string>(AUDIT_FIELDS);
const NEW = (i: number) => `ff_changed_${i}`;

/**
 * The bookkeeping of an update of records `ids` (record `ids[i]` taking `sorted[i]`) stamped
 * `updatedDate`, or null when the database is not watched (the gate's cached answer).
 */
export async function trackChanges(
  meta: ModelMeta, ids: readonly number[], sorted: readonly SortedValues[], updatedDate: string,
): Promise<ChangeTrack | null> {
  const env = currentEnv();
  const feed = env.ports.changeFeed;
  if (!feed) return null;
  const lit = feed.isWatched(env.db.name);
  if (lit !== true && (lit === false || !(await lit))) return null;

  const columns = [...new Set(sorted.flatMap((s) => [...s.columns.keys()]))].filter((f) => f.column && !AUDIT.has(f.name));
  const before = await columnsBefore(meta, ids, columns);
  const linksBefore = await linkSetsBefore(ids, sorted);
  const returning = columns.length ? sql`, ${sql.join(columns.map((f, i) => sql`${sql.id(meta.table, f.column!)} AS ${sql.id(NEW(i))}`))}` : sql``;
  const index = new Map(ids.map((id, i) => [id, i]));

  return {
    returning,
    finish(updated) {
      for (const row of updated) {
        const id = row.id as number;
        const s = sorted[index.get(id)!]!;
        const old = before.get(id);
        const changed: string[] = [];
        columns.forEach((f, i) => {
          if (s.columns.has(f) && !sameValue(old?.[NEW(i)], row[NEW(i)])) changed.push(f.name);
        });
        for (const [field, targets] of s.manyToMany) {
          if (!sameSet(linksBefore.get(field)?.get(id), targets)) changed.push(field.name);
        }
        for (const [field] of s.oneToMany) changed.push(field.name);
        if (changed.length) env.work.recordChanges.add(meta.name, id, changed, updatedDate);
      }
      if (env.work.recordChanges.size) handOverAfterCommit(env, feed);
    },
  };
}

/** The written columns' current values, by record id, under the same aliases as the RETURNING. */
async function columnsBefore(meta: ModelMeta, ids: readonly number[], columns: readonly Field[]): Promise<Map<number, Record<string, unknown>>> {
  if (!columns.length) return new Map();
  // The first statement of most updates: it carries the request guard, which would otherwise be
  // a statement of its own (`runGuarded`; with no row the UPDATE's RETURNING carries it instead).
  const rows = await runGuarded<Record<string, unknown>>((guard) => sql`SELECT ${sql.id('id')}, ${sql.join(columns.map((f, i) => sql`${sql.id(f.column!)} AS ${sql.id(NEW(i))}`))}${guard ? sql`, ${guard}` : sql``}
    FROM ${sql.table(meta.table)} WHERE id = ANY(${[...ids]})`);
  return new Map(rows.map((r) => [r.id as number, r]));
}

/** Per written ManyToMany field, each written record's current targets. */
async function linkSetsBefore(ids: readonly number[], sorted: readonly SortedValues[]): Promise<Map<ManyToManyField, Map<number, Set<number>>>> {
  const touched = new Map<ManyToManyField, Set<number>>();
  sorted.forEach((s, i) => {
    for (const [field] of s.manyToMany) (touched.get(field) ?? touched.set(field, new Set()).get(field)!).add(ids[i]!);
  });
  const out = new Map<ManyToManyField, Map<number, Set<number>>>();
  for (const [field, sources] of touched) {
    const j = field.join;
    const rows = await runSql<{ s: number; t: number }>(sql`SELECT ${sql.id(j.sourceColumn)} AS s, ${sql.id(j.targetColumn)} AS t
      FROM ${sql.table(j.table)} WHERE ${sql.id(j.sourceColumn)} = ANY(${[...sources]})`);
    const byRecord = new Map<number, Set<number>>([...sources].map((id) => [id, new Set<number>()]));
    for (const r of rows) byRecord.get(Number(r.s))?.add(Number(r.t));
    out.set(field, byRecord);
  }
  return out;
}

/**
 * Queues, once per unit of work, the hand-over of its changes to the feed after commit (at once
 * outside a transaction: the write is already durable). A savepoint rolled back takes the changes
 * recorded in it and, when queued in it, the hand-over (`unit-of-work.ts`).
 */
function handOverAfterCommit(env: Env, feed: RecordChangeFeed): void {
  const changes = env.work.recordChanges;
  if (changes.scheduled) return;
  changes.scheduled = true;
  env.work.afterCommit(() => {
    const records = changes.list();
    changes.clear();
    if (records.length) feed.publish({ db: env.db, registry: env.registry, uid: env.uid, sessionId: env.sessionId, records });
  });
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return false;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

function sameSet(before: ReadonlySet<number> | undefined, after: readonly number[]): boolean {
  const next = new Set(after);
  if (!before) return next.size === 0;
  if (before.size !== next.size) return false;
  for (const id of next) if (!before.has(id)) return false;
  return true;
}
