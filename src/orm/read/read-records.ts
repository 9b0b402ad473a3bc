/**
 * Serializes records for the API along a field tree. A ManyToOne comes back as
 * `{id, display_name, …requested}` or null; a to-many as an array of such objects.
 *
 * Relations whose whole subtree is plain stored data are read by the same SELECT, rendered as JSON
 * by PostgreSQL: a ManyToOne through a LEFT JOIN and `json_build_object`, a to-many through a
 * correlated `json_agg` subquery — 50 tasks with `stage.name`, `assignee.name` and `tags.name` are
 * one statement. A subtree that needs model code (a non-stored computed field) or holds a type
 * JSON cannot carry faithfully (Binary) is prefetched instead, with one query per relation for all
 * records of the level (never one per record).
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import type { Field } from '../fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField, RelationalField } from '../fields/relational-fields.js';
import { displayName } from '../display-name.js';
import { EMPTY_STATE, planSelect, rootScope, type QueryState } from '../query/select-plan.js';
import { compileOrder } from '../query/compile-order.js';
import { inCondition } from '../query/filter-ast.js';
import type { QueryScope } from '../query/query-scope.js';
import { relationSource, selectLinkedRows, selectRows, selectStatement, withRecName, type Row, type SelectList } from '../query/select-rows.js';
import { runSelect } from '../execute-sql.js';
import { RecordBatch } from '../record-batch.js';
import type { FieldTree } from './field-tree.js';
import { activePolicy } from '../access-policy.js';

type Sql = SqlFragment;
export type Serialized = Record<string, unknown>;

/** `json_build_object` takes at most 100 arguments, i.e. 50 key/value pairs. */
const MAX_JSON_PAIRS = 50;

/** The records a query state selects, serialized along `tree`. */
export async function readTree(tree: FieldTree, state: QueryState): Promise<Serialized[]> {
  const rows = await selectRows(tree.meta, state, levelList(tree, state.publicOnly));
  return serializeRows(tree, rows, state.publicOnly);
}

/**
 * `readTree` plus the number of records matching on every page, in the same statement: the count
 * is an uncorrelated sub-select (PostgreSQL runs it once) over the same plan without the page,
 * instead of a statement of its own. `count` is null when the page is empty beyond the first
 * (the sub-select then had no row to ride on); an empty first page means no match at all.
 */
export async function readTreeCounted(tree: FieldTree, state: QueryState): Promise<{ records: Serialized[]; count: number | null }> {
  const { columns, rest } = treeStatement(tree, state, true, () => rootScope(tree.meta, state.publicOnly));
  return countedRows(tree, state, await runSelect<Row>(columns, rest));
}

/**
 * The SELECT of `readTree` (or, `counted`, of `readTreeCounted`), each plan in a scope of
 * `newScope`: its columns, and the rest from FROM on.
 */
export function treeStatement(tree: FieldTree, state: QueryState, counted: boolean, newScope: () => QueryScope): { columns: Sql; rest: Sql } {
  const list = levelList(tree, state.publicOnly);
  if (!counted) return selectStatement(tree.meta, state, list, newScope());
  // Its own scope (aliases t0…): inside the sub-select they shadow the page's, which it never names.
  const count = planSelect(tree.meta, state, newScope());
  const countColumn = sql`(SELECT count(*)::int FROM ${count.scope.from()} WHERE ${count.where}) AS "__count"`;
  return selectStatement(tree.meta, state, (scope) => sql`${list(scope)}, ${countColumn}`, newScope());
}

/** The records and count of `readTreeCounted` from the rows of its statement. */
export async function countedRows(tree: FieldTree, state: QueryState, rows: Row[]): Promise<{ records: Serialized[]; count: number | null }> {
  const count = rows.length ? Number(rows[0]!.__count) : state.offset ? null : 0;
  return { records: await serializeRows(tree, rows, state.publicOnly), count };
}

/** The subtree read through a relation (a bare relation reads just `id` and `display_name`). */
function subtreeOf(field: RelationalField, children: FieldTree | null): FieldTree {
  return children ?? { meta: field.target, fields: new Map() };
}

/** Whether SQL alone can render a subtree as JSON (see the header). */
function isInlinable(tree: FieldTree): boolean {
  if (tree.fields.size + 2 > MAX_JSON_PAIRS) return false;
  for (const [name, { field, children }] of tree.fields) {
    if (name === 'id' || name === 'display_name') continue;
    if (field instanceof RelationalField) {
      if (field instanceof ManyToOneField && !field.column) return false;
      if (!isInlinable(subtreeOf(field, children))) return false;
    } else if (!field.column || field.type === 'Binary') {
      return false;
    }
  }
  return true;
}

/** A subtree asking only for `id` and `display_name` (a link shown as such). */
function isBare(tree: FieldTree): boolean {
  for (const name of tree.fields.keys()) if (name !== 'id' && name !== 'display_name') return false;
  return true;
}

/**
 * A bare link to a model the caller has no right to read (ModelAccess, narrowed by a key's
 * scopes) shows its id with a null `display_name`: the name is data of that model. A target
 * hidden only by a record rule or company keeps its name, as in Odoo (the name belongs to the
 * record holding the link).
 */
export function isNameless(tree: FieldTree): boolean {
  return isBare(tree) && !mayReadModel(tree.meta);
}

/** Whether the acting principal holds the read right on `meta` (always, when elevated). */
export function mayReadModel(meta: FieldTree['meta']): boolean {
  const policy = activePolicy();
  return policy === null || policy.hasRight(meta, 'read');
}

/** Stored fields a level's rows carry: the requested ones plus what `display_name` needs. */
function storedFieldsOf(tree: FieldTree): Field[] {
  return withRecName(tree.meta, [...tree.fields.values()].map((e) => e.field));
}

/**
 * The values of one tree level, each as a SQL expression under its field name: plain columns,
 * inlined relations (joins and subqueries go into `scope`).
 *
 * `prefix` set (a row of the statement itself): an inlined ManyToOne is more columns of the row,
 * named `<prefix><field>.<its field>`, which `serializeRows` gathers back into the linked record
 * (null when its id is). Building a JSON object per row instead cost PostgreSQL ~9 µs a row
 * (`json_build_object` resolves its arguments' output functions on every call) and node a parse:
 * two fifths of the extra PostgreSQL time of a 50-row list with `partner.name` (issue 29).
 * `prefix` null (inside a JSON value, a to-many's `json_agg`): a ManyToOne is a JSON object.
 */
function levelValues(tree: FieldTree, scope: QueryScope, alias: string, publicOnly: boolean, prefix: string | null): [string, Sql][] {
  const named = (name: string) => (prefix === null ? name : `${prefix}${name}`);
  const values: [string, Sql][] = [[named('id'), sql.id(alias, 'id')]];
  for (const f of storedFieldsOf(tree)) {
    if (f.name === 'id') continue;
    const entry = tree.fields.get(f.name);
    if (entry && f instanceof ManyToOneField && isNameless(subtreeOf(f, entry.children))) {
      // Only the id: the caller may not read the linked model at all (see `isNameless`).
      const fk = sql.id(alias, f.column!);
      values.push([named(f.name), prefix === null ? sql`CASE WHEN ${fk} IS NULL THEN NULL ELSE json_build_object('id', ${fk}) END` : fk]);
    } else if (entry && f instanceof ManyToOneField && isInlinable(subtreeOf(f, entry.children))) {
      const sub = subtreeOf(f, entry.children);
      // A bare link shows the linked record's id and name whoever may read it; asking for more of
      // it needs the right to read it (and its rules decide whether it shows at all).
      const target = scope.joinManyToOne(alias, f, { unrestricted: isBare(sub) });
      if (prefix !== null) {
        values.push(...levelValues(sub, scope, target, publicOnly, `${prefix}${f.name}.`));
        continue;
      }
      const object = jsonObject(sub, scope, target, publicOnly);
      values.push([f.name, sql`CASE WHEN ${sql.id(target, 'id')} IS NULL THEN NULL ELSE ${object} END`]);
    } else {
      values.push([named(f.name), sql.id(alias, f.column!)]);
    }
  }
  for (const [name, { field, children }] of tree.fields) {
    if (!(field instanceof OneToManyField || field instanceof ManyToManyField)) continue;
    const sub = subtreeOf(field, children);
    if (isInlinable(sub)) values.push([named(name), jsonList(field, sub, scope, alias, publicOnly)]);
  }
  return values;
}

/** The SELECT list of a tree level (its columns, inlined relations as more columns or JSON), given the query's scope. */
export function levelList(tree: FieldTree, publicOnly: boolean): (scope: QueryScope) => SqlFragment {
  return (scope) => sql.join(
    levelValues(tree, scope, scope.alias, publicOnly, '').map(([name, value]) => sql`${value} AS ${sql.id(name)}`), sql`, `);
}

function jsonObject(tree: FieldTree, scope: QueryScope, alias: string, publicOnly: boolean): Sql {
  const pairs = levelValues(tree, scope, alias, publicOnly, null).map(([name, value]) => sql`${sql.lit(name)}, ${value}`);
  return sql`json_build_object(${sql.join(pairs, sql`, `)})`;
}

/**
 * A to-many relation of the row `parentAlias` as a JSON array, in the target's default order and
 * under the same rules as any query of the target (archived records left out).
 */
function jsonList(
  field: OneToManyField | ManyToManyField, tree: FieldTree, outer: QueryScope, parentAlias: string, publicOnly: boolean,
): Sql {
  const scope = outer.child(tree.meta);
  const { where } = planSelect(tree.meta, { ...EMPTY_STATE, publicOnly }, scope);
  const order = sql.join(compileOrder(tree.meta.orderBy, scope), sql`, `);
  const object = jsonObject(tree, scope, scope.alias, publicOnly);
  const aggregate = sql`coalesce(json_agg(${object} ORDER BY ${order}), '[]'::json)`;
  const { from, parent } = relationSource(field, scope);
  return sql`(SELECT ${aggregate} FROM ${from} WHERE ${parent} = ${sql.id(parentAlias, 'id')} AND ${where})`;
}

/**
 * Serializes rows selected with `levelList(tree)` and their relations; `json`: rows built as JSON
 * by it (a to-many's elements), whose inlined ManyToOne values are objects, not columns.
 */
export async function serializeRows(tree: FieldTree, rows: readonly Row[], publicOnly: boolean, json = false): Promise<Serialized[]> {
  const { meta } = tree;
  const out: Serialized[] = rows.map((row) => {
    const obj: Serialized = { id: row.id, display_name: displayName(meta, row) };
    for (const [name, { field }] of tree.fields) {
      if (name === 'id' || name === 'display_name') continue;
      if (field.column && !(field instanceof RelationalField)) obj[name] = field.fromColumn(row[name]);
    }
    return obj;
  });
  const ids = rows.map((r) => r.id as number);
  const state: QueryState = { ...EMPTY_STATE, publicOnly };
  for (const [name, { field, children }] of tree.fields) {
    if (field instanceof ManyToOneField && field.column) {
      const sub = subtreeOf(field, children);
      if (isNameless(sub)) {
        rows.forEach((r, i) => {
          const link = json ? (r[name] as { id: number } | null)?.id : (r[name] as number | null);
          out[i]![name] = link === null || link === undefined ? null : { id: link, display_name: null };
        });
        continue;
      }
      if (isInlinable(sub)) {
        const linked = json ? rows.map((r) => r[name] as Row | null) : linkedColumns(rows, `${name}.`);
        const serialized = await serializeRows(sub, linked.filter((r): r is Row => r !== null), publicOnly, json);
        let next = 0;
        linked.forEach((r, i) => (out[i]![name] = r === null ? null : serialized[next++]!));
        continue;
      }
      const targetIds = [...new Set(rows.map((r) => r[name]).filter((v): v is number => typeof v === 'number'))];
      const byId = new Map<number, Serialized>();
      if (targetIds.length) {
        // A linked record is shown even when archived: the archivable default is for listing.
        const targetRows = await selectRows(sub.meta, {
          ...state, activeTest: false, filters: [inCondition(['id'], targetIds)], order: ['id ASC'],
        }, levelList(sub, publicOnly));
        for (const s of await serializeRows(sub, targetRows, publicOnly)) byId.set(s.id as number, s);
      }
      rows.forEach((r, i) => (out[i]![name] = byId.get(r[name] as number) ?? null));
    } else if (field instanceof OneToManyField || field instanceof ManyToManyField) {
      const sub = subtreeOf(field, children);
      if (isInlinable(sub)) {
        await assignLists(out, rows.map((r) => r[name] as Row[]), name, sub, publicOnly, true);
        continue;
      }
      const linked = ids.length ? await selectLinkedRows(field, ids, state, levelList(sub, publicOnly)) : [];
      const grouped = groupBy(linked, '__parent');
      await assignLists(out, ids.map((id) => grouped.get(id) ?? []), name, sub, publicOnly, false);
    } else if (field.isComputed && !field.isStored && name !== 'display_name') {
      const records = await RecordBatch.load(meta, ids);
      const method = field.options.calculate!;
      const values = await Promise.all(records.map((rec) => (rec as any)[method]()));
      records.forEach((rec, i) => {
        const at = ids.indexOf(rec.id);
        if (at >= 0) out[at]![name] = values[i] ?? null;
      });
    }
  }
  return out;
}

function groupBy(rows: Row[], key: string): Map<number, Row[]> {
  const map = new Map<number, Row[]>();
  for (const r of rows) {
    const k = r[key] as number;
    let list = map.get(k);
    if (!list) map.set(k, (list = []));
    list.push(r);
  }
  return map;
}

/**
 * The linked records of an inlined ManyToOne from its columns in `rows` (those named
 * `<prefix>…`, the prefix taken off; null where its id is null): a row of the level below.
 */
function linkedColumns(rows: readonly Row[], prefix: string): (Row | null)[] {
  if (!rows.length) return [];
  const names = Object.keys(rows[0]!).filter((k) => k.startsWith(prefix)).map((k) => [k, k.slice(prefix.length)] as const);
  const idColumn = `${prefix}id`;
  return rows.map((r) => {
    if (r[idColumn] === null) return null;
    const linked: Row = {};
    for (const [column, name] of names) linked[name] = r[column];
    return linked;
  });
}

/** Serializes each output record's list of related rows (all lists of the level in one pass). */
async function assignLists(out: Serialized[], lists: Row[][], name: string, sub: FieldTree, publicOnly: boolean, json: boolean): Promise<void> {
  const serialized = await serializeRows(sub, lists.flat(), publicOnly, json);
  let next = 0;
  lists.forEach((list, i) => (out[i]![name] = list.map(() => serialized[next++]!)));
}
