/**
 * Row locks in one global order: ascending ids. PostgreSQL locks the rows an UPDATE or DELETE
 * writes in the order its plan meets them — an index scan's, a bitmap or sequential scan's
 * physical order, a join's array order (`FROM unnest(…)` in the order of a bulk call's items or an
 * import's rows) — so two multi-row writes over the same records could lock them in opposite
 * orders and deadlock (issue 25: a bulk update by selection against an import matched by e-mail).
 *
 * Every multi-row write of the ORM reaches its rows through a subquery that locks them sorted by
 * id, `(SELECT … ORDER BY id FOR NO KEY UPDATE)`: its LockRows step runs above the sort, so the
 * locks are taken in id order, inside the same statement (no round trip more); the UPDATE or
 * DELETE around it then writes rows it already holds. `NO KEY UPDATE` is the lock an UPDATE takes
 * itself, which a foreign key's check (`KEY SHARE`, a new order line pointing at its product) does
 * not wait for; a write of a key column (`identifier`, a `_unique_together` column) and a DELETE
 * take `UPDATE`, as PostgreSQL would. One row has one lock to take: its write keeps its plain
 * statement (the single-record routes, issue 15).
 *
 * Across tables the order is owners first: a record's owner (a line's order, a subtask's parent
 * task) is locked before the record. A write of an order with its lines locks the orders, then
 * the lines; a write of lines whose stored computed fields make their orders' totals change would
 * lock the lines, then the orders (the recompute), and the two would deadlock. Such a write locks
 * those owners first, in the same statement (`ownerLock`: a CTE the statement's scan waits for, a
 * one-time filter of PostgreSQL's plan), so no round trip is added there either. One step of
 * ownership is covered (a OneToMany whose inverse the written records hold); owners of owners,
 * and owners reached through ManyToMany or longer paths, are locked by their recompute as before.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import type { Field } from '../fields/field.js';
import { OneToManyField, type ManyToOneField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';

/** The alias of the locked rows in the statement that writes them. */
export const LOCKED = 'ff_locked';

export type LockStrength = 'NO KEY UPDATE' | 'UPDATE';

/**
 * The rows of `ids` (deduplicated or not), locked in id order: `(SELECT id …) AS ff_locked`;
 * `gate`, an `OwnerLock`'s, holds the scan until the owners are locked.
 */
export function lockedIds(meta: ModelMeta, ids: readonly number[], strength: LockStrength, gate?: SqlFragment): SqlFragment {
  return sql`(SELECT l.id FROM ${sql.table(meta.table)} AS l WHERE l.id = ANY(${[...ids]}::int[])${gate ? sql` AND ${gate}` : sql``}
    ORDER BY l.id FOR ${sql.raw(strength)} OF l) AS ${sql.id(LOCKED)}`;
}

/**
 * The rows of `rows` (a FROM item whose `alias` has an `id` column: `unnest(…) AS v(id, …)`) that
 * exist in the table, locked in id order, under the same alias and columns.
 */
export function lockedRows(meta: ModelMeta, rows: SqlFragment, alias: string, strength: LockStrength, gate?: SqlFragment): SqlFragment {
  return sql`(SELECT ${sql.id(alias)}.* FROM ${rows} JOIN ${sql.table(meta.table)} AS l ON l.id = ${sql.id(alias, 'id')}${gate ? sql` WHERE ${gate}` : sql``}
    ORDER BY l.id FOR ${sql.raw(strength)} OF l) AS ${sql.id(alias)}`;
}

/**
 * The whole rows of `ids`, locked in id order, as a FROM item without its alias — for a read that
 * must judge the rows as they are once locked (`state-locks.ts`): in READ COMMITTED a row a locking
 * scan waited for is returned as its writer committed it, while any other read of the statement
 * sees the statement's snapshot, taken before the wait.
 */
export function lockedWholeRows(meta: ModelMeta, ids: readonly number[], strength: LockStrength, gate?: SqlFragment): SqlFragment {
  return sql`(SELECT l.* FROM ${sql.table(meta.table)} AS l WHERE l.id = ANY(${[...ids]}::int[])${gate ? sql` AND ${gate}` : sql``}
    ORDER BY l.id FOR ${sql.raw(strength)} OF l)`;
}

const keyColumns = new WeakMap<ModelMeta, ReadonlySet<Field>>();

/**
 * The lock of an UPDATE writing `written`: `UPDATE` when one of them is a key column (a column of
 * a unique index without a condition: PostgreSQL's own test for a key update), else `NO KEY UPDATE`.
 */
export function updateStrength(meta: ModelMeta, written: Iterable<Field>): LockStrength {
  let keys = keyColumns.get(meta);
  if (!keys) {
    const names = new Set(['identifier', ...meta.uniqueTogether.flat()]);
    keys = new Set([...meta.fields.values()].filter((f) => f.column && names.has(f.name)));
    keyColumns.set(meta, keys);
  }
  for (const f of written) if (keys.has(f)) return 'UPDATE';
  return 'NO KEY UPDATE';
}

/** What a write locks first: `with` goes before the statement, `gate` into the scan of its rows. */
export interface OwnerLock {
  readonly with: SqlFragment;
  readonly gate: SqlFragment;
}

/** An owner one step away: the model whose stored computed fields depend on the records through `link`. */
interface OwnerStep {
  readonly owner: ModelMeta;
  /** The written model's ManyToOne to the owner (the inverse of the owner's OneToMany). */
  readonly link: ManyToOneField;
}

const ownerSteps = new WeakMap<ModelMeta, Map<string, readonly OwnerStep[]>>();

/**
 * The owners whose stored computed fields a change of `name` on `meta`'s records recomputes
 * through the records' own link to them, also after the records' own computed fields that
 * depend on `name` changed (a line's quantity → its subtotal → its order's total). Worked out
 * once per model and field.
 */
function stepsOf(meta: ModelMeta, name: string): readonly OwnerStep[] {
  let byName = ownerSteps.get(meta);
  if (!byName) ownerSteps.set(meta, (byName = new Map()));
  let steps = byName.get(name);
  if (steps) return steps;
  const found: OwnerStep[] = [];
  const seen = new Set<string>();
  const visit = (field: string) => {
    if (seen.has(field)) return;
    seen.add(field);
    for (const t of meta.registry.triggers.get(`${meta.name}.${field}`) ?? []) {
      if (!t.prefix.length) {
        if (t.owner === meta) visit(t.field.name);
        continue;
      }
      const step = t.prefix.length === 1 ? t.owner.fields.get(t.prefix[0]!) : undefined;
      if (!(step instanceof OneToManyField) || step.target !== meta || !step.inverse.column) continue;
      if (!found.some((s) => s.owner === t.owner && s.link === step.inverse)) found.push({ owner: t.owner, link: step.inverse });
    }
  };
  visit(name);
  byName.set(name, (steps = found));
  return steps;
}

/**
 * The owners to lock before a write of `meta`'s records `ids` that changes `fieldNames` (see the
 * file comment), or null when its recompute updates no owner (most writes: nothing is added to
 * the statement). `written` holds each record's new column values: a link written to another
 * owner names that owner too. `except`: the link to owners the caller already holds (the parent
 * of a OneToMany write, locked by its own UPDATE).
 */
export function ownerLock(
  meta: ModelMeta, ids: readonly number[], fieldNames: Iterable<string>, written: readonly ReadonlyMap<Field, unknown>[], except?: Field,
): OwnerLock | null {
  const steps: OwnerStep[] = [];
  for (const name of fieldNames) {
    for (const step of stepsOf(meta, name)) if (step.link !== except && !steps.includes(step)) steps.push(step);
  }
  if (!steps.length) return null;
  // One global order across tables too: the owners' tables by name.
  steps.sort((a, b) => (a.owner.table < b.owner.table ? -1 : a.owner.table > b.owner.table ? 1 : 0));
  const ctes: SqlFragment[] = [];
  const counts: SqlFragment[] = [];
  steps.forEach((step, i) => {
    const name = sql.id(`ff_owners_${i}`);
    const moved = [...new Set(written.flatMap((row) => {
      const to = row.get(step.link);
      return typeof to === 'number' ? [to] : [];
    }))];
    const movedTo = moved.length ? sql` OR o.id = ANY(${moved}::int[])` : sql``;
    ctes.push(sql`${name} AS MATERIALIZED (SELECT o.id FROM ${sql.table(step.owner.table)} AS o
      WHERE o.id IN (SELECT r.${sql.id(step.link.column!)} FROM ${sql.table(meta.table)} AS r WHERE r.id = ANY(${[...ids]}::int[]))${movedTo}
      ORDER BY o.id FOR NO KEY UPDATE OF o)`);
    counts.push(sql`(SELECT count(*) FROM ${name})`);
  });
  return { with: sql`WITH ${sql.join(ctes)} `, gate: sql`${sql.join(counts, sql` + `)} >= 0` };
}
