/**
 * The FROM side of one SELECT being compiled: the root model and its alias, plus the LEFT JOINs
 * that ManyToOne traversals in filters and ordering need (each relation joined once). Subqueries
 * for to-many traversals get a child scope that shares the alias counter.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import type { ModelMeta } from '../model-meta.js';
import type { ManyToOneField } from '../fields/relational-fields.js';
import { QuerySyntaxError } from '../../errors.js';
import type { AccessPolicy } from '../access-policy.js';
import type { LiteralSlots } from './literal-slots.js';

/** Most table aliases (the root, joins, subqueries, link tables) one compiled query may use. */
export const MAX_QUERY_ALIASES = 129;

interface Join {
  alias: string;
  table: string;
  on: SqlFragment;
}

export interface QueryVariables {
  user_id: number | null;
  company_id: number | null;
  company_ids: readonly number[];
  today: string;
  now: string;
}

export class QueryScope {
  readonly alias: string;
  private readonly joins: Join[] = [];
  private readonly joinByPath = new Map<string, string>();
  /**
   * Whose read access restricts the records this scope reaches through relations: a joined or
   * EXISTS-traversed record the principal may not read behaves as absent (null). Null: none
   * (elevated code, and while compiling the record rules themselves, which are the platform's).
   */
  access: AccessPolicy | null = null;
  /** Set while a filter's shape compiles: where its literals' bound values are (literal-slots.ts). */
  literals: LiteralSlots | null = null;

  constructor(
    readonly meta: ModelMeta,
    readonly variables: QueryVariables,
    /** Refuse `internal` fields (hashes) — set for every query that comes from the API. */
    readonly publicOnly: boolean,
    private readonly counter: { next: number } = { next: 0 },
    /** The root's name in the statement; a new alias when absent. */
    alias?: string,
  ) {
    this.alias = alias ?? this.newAlias();
  }

  /**
   * A scope whose one row is the row a write statement is writing, under the table's own name (an
   * INSERT's RETURNING sees it so). A condition compiled in it that used no alias (`aliasesUsed`)
   * reads nothing but that row's columns and parameters.
   */
  static ofWrittenRow(meta: ModelMeta, variables: QueryVariables): QueryScope {
    return new QueryScope(meta, variables, false, { next: 0 }, meta.table);
  }

  /** Aliases taken so far by this scope and the subqueries sharing its counter. */
  get aliasesUsed(): number {
    return this.counter.next;
  }

  newAlias(): string {
    // Every relation a query traverses takes an alias (a join, an EXISTS subquery, a link table).
    // PostgreSQL's planning time grows much faster than linearly with them (1,000 ORed
    // `tags__name` conditions take minutes), so hostile filter text is bounded here.
    if (this.counter.next >= MAX_QUERY_ALIASES) {
      throw new QuerySyntaxError(`Query traverses too many relations (more than ${MAX_QUERY_ALIASES - 1}); simplify the filter`);
    }
    return `t${this.counter.next++}`;
  }

  /** A scope for a subquery over `meta` (EXISTS for to-many traversal). */
  child(meta: ModelMeta): QueryScope {
    const scope = new QueryScope(meta, this.variables, this.publicOnly, this.counter);
    scope.access = this.access;
    scope.literals = this.literals;
    return scope;
  }

  /**
   * Alias of the target of `field` reached from `fromAlias`, LEFT JOINed once (once per
   * restriction: a join made for a record rule is not reused by the caller's own filters).
   * `unrestricted`: for a link's own `{id, display_name}`, which belong to the record holding the
   * link (as in Odoo, where a many2one's name is read as superuser).
   */
  joinManyToOne(fromAlias: string, field: ManyToOneField, options: { unrestricted?: boolean } = {}): string {
    const restricted = this.access !== null && !options.unrestricted;
    const key = `${restricted ? 'r' : 'u'}:${fromAlias}.${field.name}`;
    const existing = this.joinByPath.get(key);
    if (existing) return existing;
    const alias = this.newAlias();
    let on = sql`${sql.id(alias, 'id')} = ${sql.id(fromAlias, field.column!)}`;
    const visible = restricted ? this.readableCondition(field.target, alias) : null;
    if (visible) on = sql`${on} AND ${visible}`;
    this.joins.push({ alias, table: field.target.table, on });
    this.joinByPath.set(key, alias);
    return alias;
  }

  /**
   * The condition a row of `meta` aliased `alias` must meet to be readable by the principal, or
   * null when every record is; 403 when the model itself is not readable (the policy's read predicate).
   */
  readableCondition(meta: ModelMeta, alias: string): SqlFragment | null {
    return this.access ? this.access.readCondition(meta, this, alias) : null;
  }

  /**
   * `"task" AS "t0" LEFT JOIN "stage" AS "t1" ON …`; `root`: the rows to read under the root's
   * alias instead of the table (a subquery locking them, `state-locks.ts`).
   */
  from(root: SqlFragment = sql.table(this.meta.table)): SqlFragment {
    const parts = [sql`${root} AS ${sql.id(this.alias)}`];
    for (const j of this.joins) parts.push(sql`LEFT JOIN ${sql.table(j.table)} AS ${sql.id(j.alias)} ON ${j.on}`);
    return sql.join(parts, sql` `);
  }
}

export function todayIso(): string {
  return new Date().toISOString().slice(0, 10);
}
