/**
 * An immutable query over one model: each method returns a new queryset; nothing runs until a
 * terminal method (`all`, `ids`, `count`, `aggregate`, `group`, `read`, `update`, `delete`).
 *
 * ```ts
 * const late = Task.query('Q(deadline__lt=today) & Q(stage__is_closed=False)').order_by('deadline ASC').limit(50);
 * await late.count();
 * await late.update({ priority: 'high' });
 * ```
 */
import { sql } from '../db/sql-fragment.js';
import { BadRequest } from '../errors.js';
import { ManyToOneField } from './fields/relational-fields.js';
import { withEnv } from './env.js';
import type { Model } from './model.js';
import type { ModelMeta } from './model-meta.js';
import { runSelect } from './execute-sql.js';
import { inCondition, type FilterNode } from './query/filter-ast.js';
import { MAX_LITERAL_LENGTH, parseFilter } from './query/filter-parser.js';
import { charactersBeyond } from './fields/storable-text.js';
import { EMPTY_STATE, planSelect, type QueryState } from './query/select-plan.js';
import { selectRows, withRecName, type Row } from './query/select-rows.js';
import { buildFieldTree, defaultFieldPaths } from './read/field-tree.js';
import { mayReadModel, readTree, readTreeCounted, type Serialized } from './read/read-records.js';
import { readTreeCompiled, readTreeCountedCompiled } from './read/compiled-tree-read.js';
import { RecordBatch } from './record-batch.js';
import { displayName } from './display-name.js';
import { writeRecords } from './write/write-records.js';
import { deleteRecords } from './write/delete-records.js';
import { QuerySyntaxError } from '../errors.js';

/** A Q-expression string, a parsed filter, or `{field: value}` equalities. */
export type FilterInput = string | FilterNode | Record<string, unknown>;

export type AggregateFunction = 'sum' | 'avg' | 'min' | 'max' | 'count';
const AGGREGATES = new Set<AggregateFunction>(['sum', 'avg', 'min', 'max', 'count']);
const NUMERIC = new Set(['Integer', 'Float', 'Monetary']);
/** Most name-search terms one query accepts (they are ANDed, so more never helps a person). */
export const MAX_SEARCH_TERMS = 50;

export interface GroupResult {
  [key: string]: unknown;
  count: number;
  aggregates: Record<string, number | null>;
}

export class QuerySet<T extends Model = Model> {
  constructor(
    readonly meta: ModelMeta,
    readonly state: QueryState = EMPTY_STATE,
  ) {}

  private with(changes: Partial<QueryState>): QuerySet<T> {
    return new QuerySet<T>(this.meta, { ...this.state, ...changes });
  }

  filter(input: FilterInput): QuerySet<T> {
    return this.with({ filters: [...this.state.filters, toFilterNode(input)] });
  }
  order_by(...entries: string[]): QuerySet<T> {
    return this.with({ order: entries });
  }
  limit(n: number | null): QuerySet<T> {
    return this.with({ limit: n });
  }
  offset(n: number): QuerySet<T> {
    return this.with({ offset: n });
  }
  /** Terms matched against the model's name-search fields; several terms are ANDed. */
  search(terms: readonly string[]): QuerySet<T> {
    const nameSearch = [...this.state.nameSearch, ...terms];
    // Each term is a bound parameter per search field: unbounded, a request could overflow
    // PostgreSQL's 65,535 parameters (a 500) or cost arbitrary work.
    if (nameSearch.length > MAX_SEARCH_TERMS) throw new BadRequest(`At most ${MAX_SEARCH_TERMS} name_search terms`);
    // A term is a pattern matched against every row: its cost grows with its length (see
    // MAX_LITERAL_LENGTH, which filter strings share).
    for (const term of terms) {
      const length = charactersBeyond(term, MAX_LITERAL_LENGTH);
      if (length !== null) throw new BadRequest(`A name_search term is too long (${length} characters, at most ${MAX_LITERAL_LENGTH})`);
    }
    return this.with({ nameSearch });
  }
  /** Refuse internal fields in paths: used for everything a client sends. */
  public_only(): QuerySet<T> {
    return this.with({ publicOnly: true });
  }
  /** Include archived records although the filter does not name `active`. */
  with_archived(): QuerySet<T> {
    return this.with({ activeTest: false });
  }
  /**
   * Locks the selected rows (`SELECT … FOR UPDATE`) until the unit of work ends, in ascending ids
   * (so the rows come back in that order; `order_by` cannot be combined with it). A row another
   * transaction holds is waited for, then read as that transaction left it. For the reads that
   * return rows (`all`, `first`, `ids`, `exists`, `read`, and `update`/`delete`, which lock before
   * they write); counting and grouping lock nothing and refuse it.
   */
  for_update(): QuerySet<T> {
    return this.with({ forUpdate: true });
  }
  /** Counting and grouping statements cannot lock rows (PostgreSQL refuses FOR UPDATE with aggregates). */
  private assertNotLocking(method: string): void {
    if (this.state.forUpdate) throw new Error(`${this.meta.name}: ${method}() cannot lock rows; drop for_update()`);
  }

  async all(): Promise<T[]> {
    return RecordBatch.fromRows(this.meta, await selectRows(this.meta, this.state, RecordBatch.storedFields(this.meta))) as T[];
  }
  async first(): Promise<T | null> {
    return (await this.limit(1).all())[0] ?? null;
  }
  async ids(): Promise<number[]> {
    return (await selectRows(this.meta, this.state, [])).map((r) => r.id as number);
  }

  /** Matching records, all pages (limit/offset ignored). */
  async count(): Promise<number> {
    this.assertNotLocking('count');
    const { scope, where } = planSelect(this.meta, this.state);
    const [row] = await runSelect<{ n: number | string }>(sql`count(*)::int AS n`, sql`FROM ${scope.from()} WHERE ${where}`);
    return Number(row!.n);
  }

  async exists(): Promise<boolean> {
    return (await this.limit(1).ids()).length > 0;
  }

  /** `{total: 'sum'}` → `{total: 1234.5}` over all matching records. */
  async aggregate(spec: Record<string, AggregateFunction>): Promise<Record<string, number | null>> {
    this.assertNotLocking('aggregate');
    const { scope, where } = planSelect(this.meta, this.state);
    const items = this.aggregateItems(spec, scope.alias);
    if (!items.length) return {};
    const [row] = await runSelect<Row>(sql.join(items.map((i) => i.sql), sql`, `), sql`FROM ${scope.from()} WHERE ${where}`);
    return Object.fromEntries(items.map((i) => [i.name, row![i.name] === null ? null : Number(row![i.name])]));
  }

  private aggregateItems(spec: Record<string, AggregateFunction>, alias: string) {
    return Object.entries(spec).map(([name, fn]) => {
      const f = this.meta.fields.get(name);
      if (!f || !f.column || (this.state.publicOnly && f.options.internal)) {
        throw new BadRequest(`Cannot aggregate '${name}': not a stored field of ${this.meta.name}`);
      }
      if (!AGGREGATES.has(fn)) throw new BadRequest(`Unknown aggregate function '${String(fn)}'`);
      if (fn !== 'count' && !NUMERIC.has(f.type)) throw new BadRequest(`Cannot ${fn} '${name}': it is a ${f.type} field`);
      const col = sql.id(alias, f.column);
      // `fn` is one of AGGREGATES, so naming it as raw SQL is safe.
      const expr = fn === 'count' ? sql`count(${col})::int` : sql`${sql.raw(fn)}(${col})`;
      return { name, sql: sql`${expr} AS ${sql.id(name)}` };
    });
  }

  /**
   * Groups matching records by fields: `[{stage: {id, display_name}, count, aggregates: {…}}]`,
   * ordered by the group values; limit/offset page the groups.
   */
  async group(groupFields: readonly string[], spec: Record<string, AggregateFunction> = {}): Promise<GroupResult[]> {
    this.assertNotLocking('group');
    if (!groupFields.length) throw new BadRequest('group_fields needs at least one field');
    const { scope, where } = planSelect(this.meta, this.state);
    // Deduplicated: a repeated field adds nothing (and thousands of them overflow the select list).
    const keys = [...new Set(groupFields)].map((name) => {
      const f = this.meta.fields.get(name);
      if (!f || !f.column || (this.state.publicOnly && f.options.internal) || f.type === 'Binary' || f.type === 'Json') {
        throw new BadRequest(`Cannot group by '${String(name)}': not a groupable stored field of ${this.meta.name}`);
      }
      return f;
    });
    const aggs = this.aggregateItems(spec, scope.alias);
    const cols = keys.map((f) => sql`${sql.id(scope.alias, f.column!)} AS ${sql.id(f.name)}`);
    const groupBy = sql.join(keys.map((f) => sql.id(scope.alias, f.column!)), sql`, `);
    const orderBy = sql.join(keys.map((f) => sql`${sql.id(scope.alias, f.column!)} ASC NULLS LAST`), sql`, `);
    const limit = this.state.limit === null ? sql`` : sql` LIMIT ${this.state.limit}`;
    const offset = this.state.offset ? sql` OFFSET ${this.state.offset}` : sql``;
    const rows = await runSelect<Row>(sql.join([...cols, sql`count(*)::int AS "__count"`, ...aggs.map((a) => a.sql)], sql`, `),
      sql`FROM ${scope.from()} WHERE ${where} GROUP BY ${groupBy} ORDER BY ${orderBy}${limit}${offset}`);
    // Name the related records of ManyToOne keys with one query per key field.
    const names = new Map<string, Map<number, string | null>>();
    for (const f of keys) {
      if (!(f instanceof ManyToOneField)) continue;
      const ids = [...new Set(rows.map((r) => r[f.name]).filter((v): v is number => typeof v === 'number'))];
      // Group keys are links of the grouped records: their names show like a bare link's.
      const target = await withEnv({ su: true }, () => selectRows(f.target, {
        ...EMPTY_STATE, activeTest: false, filters: [inCondition(['id'], ids)],
      }, withRecName(f.target, [])));
      // …and like a bare link, without a name when the caller may not read the linked model at all.
      names.set(f.name, new Map(target.map((t) => [t.id as number, mayReadModel(f.target) ? displayName(f.target, t) : null])));
    }
    return rows.map((r) => {
      const group: GroupResult = { count: Number(r.__count), aggregates: {} };
      for (const f of keys) {
        const v = r[f.name];
        group[f.name] = f instanceof ManyToOneField
          ? (v === null ? null : { id: v, display_name: names.get(f.name)!.get(v as number) ?? null })
          : f.fromColumn(v);
      }
      for (const a of aggs) group.aggregates[a.name] = r[a.name] === null ? null : Number(r[a.name]);
      return group;
    });
  }

  /** Serialized records along field paths (`['name', 'stage.name', 'tags.name']`), relations prefetched. */
  async read(paths?: readonly unknown[]): Promise<Serialized[]> {
    const tree = this.#fieldTree(paths);
    return (await readTreeCompiled(tree, this.state)) ?? readTree(tree, this.state);
  }

  /** `read` and `count` (of every page) together, in one statement when the page is not empty. */
  async read_counted(paths?: readonly unknown[]): Promise<{ records: Serialized[]; count: number }> {
    this.assertNotLocking('read_counted');
    const tree = this.#fieldTree(paths);
    const { records, count } = (await readTreeCountedCompiled(tree, this.state)) ?? (await readTreeCounted(tree, this.state));
    return { records, count: count ?? (await this.count()) };
  }

  #fieldTree(paths?: readonly unknown[]) {
    return buildFieldTree(this.meta, paths?.length ? paths : defaultFieldPaths(this.meta), this.state.publicOnly);
  }

  /** Writes the same values to every matching record; returns how many. */
  async update(vals: Record<string, unknown>): Promise<number> {
    const ids = await this.ids();
    if (ids.length) await writeRecords(this.meta, ids, vals);
    return ids.length;
  }

  /** Deletes every matching record; returns how many. */
  async delete(): Promise<number> {
    const ids = await this.ids();
    if (ids.length) await deleteRecords(this.meta, ids);
    return ids.length;
  }
}

export function toFilterNode(input: FilterInput): FilterNode {
  if (typeof input === 'string') return parseFilter(input);
  if (input && typeof input === 'object' && 'kind' in input && typeof (input as FilterNode).kind === 'string') {
    return input as FilterNode;
  }
  if (input && typeof input === 'object') {
    const children: FilterNode[] = Object.entries(input).map(([path, value]) => ({
      kind: 'condition', segments: path.split('__'), value: value as never, position: 0,
    }));
    return children.length === 1 ? children[0]! : { kind: 'and', children };
  }
  throw new QuerySyntaxError('A filter is a Q-expression string or an object of field values');
}

