/**
 * Compiles a parsed filter (filter-ast.ts) into a parameterised SQL condition for one scope:
 * ManyToOne traversals become LEFT JOINs of the scope, to-many traversals become EXISTS
 * subqueries (no duplicate rows), values become bind parameters. Field paths and lookups are
 * checked against the model; a wrong one is a `QuerySyntaxError` naming it and its position.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import { QuerySyntaxError, ValidationError } from '../../errors.js';
import type { Field } from '../fields/field.js';
import { FileField, ManyToManyField, ManyToOneField, OneToManyField } from '../fields/relational-fields.js';
import type { ConditionNode, FilterNode, FilterValue, Lookup } from './filter-ast.js';
import type { QueryScope, QueryVariables } from './query-scope.js';
import { isLookup, requireField } from './resolve-path.js';
import type { LiteralSlots } from './literal-slots.js';

type Sql = SqlFragment;
const TRUE = sql`TRUE`;
const FALSE = sql`FALSE`;
const TEXT_TYPES = new Set(['Char', 'Text', 'Selection']);

export function compileFilter(node: FilterNode, scope: QueryScope): Sql {
  switch (node.kind) {
    case 'all':
      return TRUE;
    case 'and':
      return node.children.length ? sql`(${sql.join(node.children.map((c) => compileFilter(c, scope)), sql` AND `)})` : TRUE;
    case 'or':
      return node.children.length ? sql`(${sql.join(node.children.map((c) => compileFilter(c, scope)), sql` OR `)})` : FALSE;
    case 'not':
      // A comparison with an empty value is NULL in SQL, and NOT NULL is NULL again: without the
      // COALESCE, `~Q(qty=2)` would also drop the records whose qty is empty, so a condition and
      // its negation would not together cover every record (and `~Q(x__in=…)` ≠ `x__not_in`).
      return sql`(NOT COALESCE(${compileFilter(node.child, scope)}, FALSE))`;
    case 'condition':
      return compileCondition(node, scope, scope.alias, scope.meta, 0);
  }
}

/** True when some condition's path starts with `name` (used for the archivable default). */
export function filterMentions(node: FilterNode, name: string): boolean {
  switch (node.kind) {
    case 'condition':
      return node.segments[0] === name;
    case 'and':
    case 'or':
      return node.children.some((c) => filterMentions(c, name));
    case 'not':
      return filterMentions(node.child, name);
    default:
      return false;
  }
}

function compileCondition(node: ConditionNode, scope: QueryScope, alias: string, meta: QueryScope['meta'], start: number): Sql {
  const segs = node.segments;
  for (let i = start; i < segs.length; i++) {
    const seg = segs[i]!;
    const f = requireField(meta, seg, scope.publicOnly, node.position);
    const rest = segs.slice(i + 1);
    const lookup = rest.length === 1 && isLookup(rest[0]!) ? (rest[0] as Lookup) : null;
    if (rest.length === 0 || lookup) {
      return compileTerminal(node, scope, alias, f, lookup ?? 'exact');
    }
    if (f instanceof ManyToOneField || f instanceof FileField) {
      // `stage__id…` compares the foreign key itself: no join needed.
      if (rest[0] === 'id' && (rest.length === 1 || (rest.length === 2 && isLookup(rest[1]!)))) {
        return compileTerminal(node, scope, alias, f, (rest[1] as Lookup | undefined) ?? 'exact');
      }
      if (f instanceof FileField) throw new QuerySyntaxError(`Cannot traverse File field '${seg}' beyond 'id'`, node.position);
      alias = scope.joinManyToOne(alias, f);
      meta = f.target;
      continue;
    }
    if (f instanceof OneToManyField || f instanceof ManyToManyField) {
      return existsThrough(f, scope, alias, (sub, subAlias) => compileCondition(node, sub, subAlias, f.target, i + 1));
    }
    throw new QuerySyntaxError(`Unknown lookup '${rest.join('__').slice(0, 60)}' for ${f.type} field '${seg}'`, node.position);
  }
  throw new QuerySyntaxError('Empty field path', node.position);
}

/** `EXISTS (SELECT 1 FROM <target> … WHERE <link to alias> AND <inner>)` for a to-many field. */
function existsThrough(
  f: OneToManyField | ManyToManyField,
  scope: QueryScope,
  alias: string,
  inner: ((sub: QueryScope, subAlias: string) => Sql) | null,
): Sql {
  const sub = scope.child(f.target);
  // Records the principal may not read are not there to be matched (none when unrestricted).
  const visible = sub.readableCondition(f.target, sub.alias);
  const restrict = (cond: Sql) => (visible ? sql`${cond} AND ${visible}` : cond);
  let link: Sql;
  let from: Sql;
  if (f instanceof OneToManyField) {
    link = sql`${sql.id(sub.alias, f.inverse.column!)} = ${sql.id(alias, 'id')}`;
    const cond = restrict(inner ? inner(sub, sub.alias) : TRUE);
    from = sub.from();
    return sql`EXISTS (SELECT 1 FROM ${from} WHERE ${link} AND ${cond})`;
  }
  const rel = scope.newAlias();
  const j = f.join;
  link = sql`${sql.id(rel, j.sourceColumn)} = ${sql.id(alias, 'id')}`;
  if (!inner && !visible) return sql`EXISTS (SELECT 1 FROM ${sql.table(j.table)} AS ${sql.id(rel)} WHERE ${link})`;
  const cond = restrict(inner ? inner(sub, sub.alias) : TRUE);
  from = sub.from();
  return sql`EXISTS (SELECT 1 FROM ${sql.table(j.table)} AS ${sql.id(rel)} JOIN ${from} ON ${sql.id(sub.alias, 'id')} = ${sql.id(rel, j.targetColumn)} WHERE ${link} AND ${cond})`;
}

function compileTerminal(node: ConditionNode, scope: QueryScope, alias: string, f: Field, lookup: Lookup): Sql {
  const value = resolveVariables(node.value, scope.variables);
  if (f instanceof OneToManyField || f instanceof ManyToManyField) {
    // `tags=3`, `tags__in=[…]` match records linked to those ids; `tags__isnull=True` (or
    // `tags=None`) records with none. The negative lookups are about the whole set of links:
    // `tags__not=3` / `tags__not_in=[…]` match records NOT linked to those ids, records without
    // links included (not "linked to some other id").
    const anyLink = () => existsThrough(f, scope, alias, null);
    const idField = f.target.fields.get('id')!;
    const linked = (lk: Lookup, v: unknown) =>
      existsThrough(f, scope, alias, (_sub, subAlias) => compareColumn(node, sql.id(subAlias, 'id'), idField, lk, v, scope.literals));
    switch (lookup) {
      case 'isnull':
        return isTrue(value, node) ? sql`(NOT ${anyLink()})` : anyLink();
      case 'exact':
        return value === null ? sql`(NOT ${anyLink()})` : linked('exact', value);
      case 'not':
        return value === null ? anyLink() : sql`(NOT ${linked('exact', value)})`;
      case 'in':
      case 'not_in': {
        const list = asList(value, node, lookup);
        const items = list.filter((v) => v !== null);
        const hasNull = items.length !== list.length;
        if (lookup === 'in') {
          const match = items.length ? linked('in', items) : FALSE;
          return hasNull ? sql`(${match} OR NOT ${anyLink()})` : match;
        }
        const noMatch = items.length ? sql`(NOT ${linked('in', items)})` : TRUE;
        return hasNull ? sql`(${noMatch} AND ${anyLink()})` : noMatch;
      }
      default:
        return linked(lookup, value);
    }
  }
  if (f.column === null) {
    if (f.name === 'display_name' && f.model.recName) {
      return compareColumn(node, sql.id(alias, f.model.fields.get(f.model.recName)!.column!), f, lookup, value, scope.literals);
    }
    throw new QuerySyntaxError(`Field '${f.name}' is computed and not stored; it cannot be filtered on`, node.position);
  }
  return compareColumn(node, sql.id(alias, f.column), f, lookup, value, scope.literals);
}

/** `slots`: set while a filter's shape compiles, it marks the bound value of each slot (literal-slots.ts). */
function compareColumn(node: ConditionNode, col: Sql, f: Field, lookup: Lookup, value: unknown, slots: LiteralSlots | null): Sql {
  const conv = (v: unknown): unknown => {
    let converted: unknown;
    try {
      converted = f.toFilterValue(v);
    } catch (err) {
      if (err instanceof ValidationError) throw new QuerySyntaxError(err.message, node.position);
      throw err;
    }
    return slots && v === node.value ? slots.mark(node, f, lookup, converted) : converted;
  };
  switch (lookup) {
    case 'exact':
      if (value === null) return sql`(${col} IS NULL)`;
      if (f.type === 'Boolean') return isTrue(value, node) ? sql`(${col} IS TRUE)` : sql`(${col} IS NOT TRUE)`;
      return sql`(${col} = ${conv(value)})`;
    case 'not':
      if (value === null) return sql`(${col} IS NOT NULL)`;
      if (f.type === 'Boolean') return isTrue(value, node) ? sql`(${col} IS NOT TRUE)` : sql`(${col} IS TRUE)`;
      return sql`(${col} IS DISTINCT FROM ${conv(value)})`;
    case 'in':
    case 'not_in': {
      const list = asList(value, node, lookup);
      const hasNull = list.includes(null);
      const items = list.filter((v) => v !== null).map(conv);
      const anyOf = items.length ? sql`${col} = ANY(${items})` : FALSE;
      if (lookup === 'in') return hasNull ? sql`(${anyOf} OR ${col} IS NULL)` : sql`(${anyOf})`;
      // `not_in` keeps empty values unless None is listed, as a user of Odoo expects.
      return hasNull ? sql`(${col} IS NOT NULL AND NOT (${anyOf}))` : sql`(${col} IS NULL OR NOT (${anyOf}))`;
    }
    case 'gt':
      return sql`(${col} > ${conv(scalar(value, node, lookup))})`;
    case 'gte':
      return sql`(${col} >= ${conv(scalar(value, node, lookup))})`;
    case 'lt':
      return sql`(${col} < ${conv(scalar(value, node, lookup))})`;
    case 'lte':
      return sql`(${col} <= ${conv(scalar(value, node, lookup))})`;
    case 'range': {
      const list = asList(value, node, lookup);
      if (list.length !== 2 || list.includes(null)) {
        throw new QuerySyntaxError(`Lookup 'range' needs a list of two values`, node.position);
      }
      return sql`(${col} BETWEEN ${conv(list[0])} AND ${conv(list[1])})`;
    }
    case 'isnull':
      return isTrue(value, node) ? sql`(${col} IS NULL)` : sql`(${col} IS NOT NULL)`;
    case 'contains':
    case 'icontains':
    case 'startswith':
    case 'istartswith':
    case 'endswith':
    case 'iendswith': {
      if (!TEXT_TYPES.has(f.type)) {
        throw new QuerySyntaxError(`Lookup '${lookup}' applies to text fields, not to ${f.type} field '${f.name}'`, node.position);
      }
      const given = scalar(value, node, lookup);
      if (typeof given !== 'string') throw new QuerySyntaxError(`Lookup '${lookup}' needs a string`, node.position);
      // The field's own check (no NUL, no half surrogate pair), so the refusal names the field.
      const text = conv(given) as string;
      const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`);
      const pattern = lookup.endsWith('contains') ? `%${escaped}%` : lookup.endsWith('startswith') ? `${escaped}%` : `%${escaped}`;
      return lookup.startsWith('i') ? sql`(${col} ILIKE ${pattern})` : sql`(${col} LIKE ${pattern})`;
    }
  }
}

function resolveVariables(value: FilterValue, vars: QueryVariables): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveVariables(v, vars)).flat();
  if (value !== null && typeof value === 'object' && 'variable' in value) return vars[value.variable];
  return value;
}

function asList(value: unknown, node: ConditionNode, lookup: string): unknown[] {
  if (!Array.isArray(value)) throw new QuerySyntaxError(`Lookup '${lookup}' needs a list of values`, node.position);
  return value;
}

function scalar(value: unknown, node: ConditionNode, lookup: string): unknown {
  if (value === null || Array.isArray(value)) {
    throw new QuerySyntaxError(`Lookup '${lookup}' needs a single non-null value`, node.position);
  }
  return value;
}

function isTrue(value: unknown, node: ConditionNode): boolean {
  if (typeof value !== 'boolean') throw new QuerySyntaxError('Expected True or False', node.position);
  return value;
}
