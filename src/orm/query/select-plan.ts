/**
 * Everything that decides which rows of a model a query sees, compiled once into a FROM and a
 * WHERE: the caller's filters, the archivable default (only active records unless the filter
 * names `active`), name-search terms and what the acting user may read (`access-policy.ts`). Every read path — records, API reads, counts,
 * aggregates, groups, updates and deletes of a queryset — builds its SQL from a plan, so a rule
 * added here holds everywhere.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import { activePolicy } from '../access-policy.js';
import { currentEnv } from '../env.js';
import type { ModelMeta } from '../model-meta.js';
import type { ConditionNode, FilterNode } from './filter-ast.js';
import { compileFilter, filterMentions } from './compile-filter.js';
import { compileOrder } from './compile-order.js';
import { QueryScope, todayIso, type QueryVariables } from './query-scope.js';

type Sql = SqlFragment;

export interface QueryState {
  readonly filters: readonly FilterNode[];
  readonly order: readonly string[] | null;
  readonly limit: number | null;
  readonly offset: number;
  readonly nameSearch: readonly string[];
  /** Refuse internal fields in paths (set for API requests). */
  readonly publicOnly: boolean;
  /** Apply the archivable default (only active records). */
  readonly activeTest: boolean;
  /** `for_update()`: the selected rows of the model's table are locked, in id order, until the transaction ends. */
  readonly forUpdate: boolean;
}

export const EMPTY_STATE: QueryState = {
  filters: [], order: null, limit: null, offset: 0, nameSearch: [], publicOnly: false, activeTest: true, forUpdate: false,
};

export interface SelectPlan {
  readonly scope: QueryScope;
  readonly where: Sql;
}

/** The variables filters may name, for the current env; `onClock` is told when `today` or `now` is read. */
export function currentVariables(onClock?: () => void): QueryVariables {
  const env = currentEnv();
  return {
    user_id: env.uid,
    company_id: env.companyId,
    company_ids: env.companyIds,
    // Computed only when a filter names them: most queries never do.
    get today() {
      onClock?.();
      return todayIso();
    },
    get now() {
      onClock?.();
      return new Date().toISOString();
    },
  };
}

/** The scope of a query's root model, restricted by what the acting principal may read. */
export function rootScope(meta: ModelMeta, publicOnly: boolean, variables: QueryVariables = currentVariables()): QueryScope {
  const scope = new QueryScope(meta, variables, publicOnly);
  scope.access = activePolicy();
  return scope;
}

/** Compiles the row-selecting part of a query (joins are collected into `scope`). */
export function planSelect(meta: ModelMeta, state: QueryState, scope: QueryScope = rootScope(meta, state.publicOnly)): SelectPlan {
  const conditions: Sql[] = state.filters.map((f) => compileFilter(f, scope));
  if (meta.isArchivable && state.activeTest && !state.filters.some((f) => filterMentions(f, 'active'))) {
    conditions.push(sql`${sql.id(scope.alias, 'active')} IS TRUE`);
  }
  for (const term of state.nameSearch) {
    if (!meta.nameSearchFields.length) break;
    const anyField: FilterNode = {
      kind: 'or',
      children: meta.nameSearchFields.map(
        (path): ConditionNode => ({ kind: 'condition', segments: [...path.split('__'), 'icontains'], value: term, position: 0 }),
      ),
    };
    conditions.push(compileFilter(anyField, scope));
  }
  // Model right, record rules and company isolation: part of the same statement, never a check
  // per record afterwards.
  const allowed = activePolicy()?.readCondition(meta, scope);
  if (allowed) conditions.push(allowed);
  const where = conditions.length ? sql.join(conditions, sql` AND `) : sql`TRUE`;
  return { scope, where };
}

/**
 * ORDER BY + LIMIT/OFFSET for a plan (the model's default order when none is given). A locking
 * read orders by id and locks the root's rows only (`FOR UPDATE OF` its alias: joined records are
 * read, not locked). PostgreSQL locks the rows as they leave the sort, so in ascending ids — the
 * order every write of the ORM locks in (`write/row-locks.ts`), which keeps two lockers from
 * deadlocking.
 */
export function orderAndPage(meta: ModelMeta, state: QueryState, scope: QueryScope): Sql {
  if (state.forUpdate && state.order !== null) throw new Error(`${meta.name}: for_update() locks in id order and cannot be combined with order_by()`);
  const order = compileOrder(state.forUpdate ? ['id ASC'] : state.order ?? meta.orderBy, scope);
  const limit = state.limit === null ? sql`` : sql` LIMIT ${state.limit}`;
  const offset = state.offset ? sql` OFFSET ${state.offset}` : sql``;
  const lock = state.forUpdate ? sql` FOR UPDATE OF ${sql.id(scope.alias)}` : sql``;
  return sql`ORDER BY ${sql.join(order, sql`, `)}${limit}${offset}${lock}`;
}
