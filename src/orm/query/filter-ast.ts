/**
 * The parsed form of a Q-expression (ARCHITECTURE §4). The parser produces these immutable
 * nodes from text; `compile-filter.ts` resolves field paths against a model and turns them into
 * parameterised SQL. Nothing here knows about models or SQL.
 */

/** A variable the server fills in at compile time (`Q(assignee=user_id)`). */
export type FilterVariable = 'user_id' | 'company_id' | 'company_ids' | 'today' | 'now';

export type FilterValue =
  | null
  | boolean
  | number
  | string
  | readonly FilterValue[]
  | { readonly variable: FilterVariable };

/**
 * One `path=value` argument of a `Q(...)`. `segments` is the path split on `__`
 * (`stage__name__icontains` → `['stage', 'name', 'icontains']`); whether the last segment is a
 * lookup or a field is decided against the model when compiling.
 */
export interface ConditionNode {
  readonly kind: 'condition';
  readonly segments: readonly string[];
  readonly value: FilterValue;
  /** Offset of the path's first character in the source text (for error messages). */
  readonly position: number;
}

export interface AndNode {
  readonly kind: 'and';
  readonly children: readonly FilterNode[];
}

export interface OrNode {
  readonly kind: 'or';
  readonly children: readonly FilterNode[];
}

export interface NotNode {
  readonly kind: 'not';
  readonly child: FilterNode;
}

/** `Q()` with no arguments: matches every record. */
export interface AllNode {
  readonly kind: 'all';
}

export type FilterNode = ConditionNode | AndNode | OrNode | NotNode | AllNode;

/** Lookups accepted after a field path (`exact` when none is given). */
export const LOOKUPS = [
  'exact', 'not', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'icontains',
  'startswith', 'istartswith', 'endswith', 'iendswith', 'isnull', 'range',
] as const;
export type Lookup = (typeof LOOKUPS)[number];

export const VARIABLES: readonly FilterVariable[] = ['user_id', 'company_id', 'company_ids', 'today', 'now'];

/** `<path>__in=[values]` built by the platform itself (no source text, so position 0). */
export function inCondition(path: readonly string[], values: readonly (number | string)[]): ConditionNode {
  return { kind: 'condition', segments: [...path, 'in'], value: values, position: 0 };
}
