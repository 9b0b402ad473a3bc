/**
 * Filters on fields, as a person builds them (field, condition, value) and as the server reads
 * them (one Q-expression each). A filter is plain data `{field, op, value}` so the URL can carry it
 * and a reload rebuilds the same list.
 */
import { formatValue } from '../../format.js';
import { qCondition } from './q-expression.js';

/**
 * @typedef {import('./list-columns.js').RegistryEntry} RegistryEntry
 * @typedef {{field: string, op: string, value?: string | number | boolean | null}} FieldFilter
 * @typedef {{op: string, label: string, lookup: string | null, needsValue: boolean, fixed?: unknown}} Operator
 */

/** @type {Record<string, Operator>} */
const OPS = {
  contains: { op: 'contains', label: 'contains', lookup: 'icontains', needsValue: true },
  not_contains: { op: 'not_contains', label: 'does not contain', lookup: 'icontains', needsValue: true },
  eq: { op: 'eq', label: 'is', lookup: null, needsValue: true },
  ne: { op: 'ne', label: 'is not', lookup: 'not', needsValue: true },
  gt: { op: 'gt', label: 'is greater than', lookup: 'gt', needsValue: true },
  gte: { op: 'gte', label: 'is at least', lookup: 'gte', needsValue: true },
  lt: { op: 'lt', label: 'is less than', lookup: 'lt', needsValue: true },
  lte: { op: 'lte', label: 'is at most', lookup: 'lte', needsValue: true },
  before: { op: 'before', label: 'is before', lookup: 'lt', needsValue: true },
  after: { op: 'after', label: 'is after', lookup: 'gt', needsValue: true },
  on: { op: 'on', label: 'is on', lookup: null, needsValue: true },
  is_true: { op: 'is_true', label: 'is yes', lookup: null, needsValue: false, fixed: true },
  // An unset yes/no reads as no.
  is_false: { op: 'is_false', label: 'is no', lookup: 'in', needsValue: false, fixed: [false, null] },
  set: { op: 'set', label: 'is set', lookup: 'isnull', needsValue: false, fixed: false },
  not_set: { op: 'not_set', label: 'is not set', lookup: 'isnull', needsValue: false, fixed: true },
};

/** @type {Record<string, string[]>} */
const BY_TYPE = {
  Char: ['contains', 'not_contains', 'eq', 'ne', 'set', 'not_set'],
  Text: ['contains', 'not_contains', 'set', 'not_set'],
  Integer: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  Float: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  Monetary: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  Date: ['on', 'before', 'after', 'set', 'not_set'],
  Datetime: ['before', 'after', 'set', 'not_set'],
  Boolean: ['is_true', 'is_false'],
  Selection: ['eq', 'ne', 'set', 'not_set'],
  ManyToOne: ['contains', 'not_contains', 'set', 'not_set'],
  ManyToMany: ['contains', 'not_contains', 'set', 'not_set'],
  OneToMany: ['contains', 'not_contains', 'set', 'not_set'],
};

/**
 * The conditions a field of this type offers.
 * @param {RegistryEntry} entry
 * @returns {Operator[]}
 */
export function operatorsFor(entry) {
  return (BY_TYPE[entry.type] ?? ['eq', 'ne', 'set', 'not_set']).map((op) => OPS[op]);
}

/** @param {string} op */
export function operator(op) {
  return OPS[op] ?? null;
}

/**
 * The value a typed text stands for in a field of this type; `undefined` when it is not one.
 * @param {RegistryEntry} entry @param {string} text
 * @returns {string | number | undefined}
 */
export function parseFilterValue(entry, text) {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (entry.type === 'Integer') return /^-?\d+$/.test(trimmed) ? Number(trimmed) : undefined;
  if (entry.type === 'Float' || entry.type === 'Monetary') {
    const n = Number(trimmed.replace(',', '.'));
    return Number.isFinite(n) ? n : undefined;
  }
  if (entry.type === 'Date') return /^\d{4}-\d{2}-\d{2}$/.test(trimmed) ? trimmed : undefined;
  if (entry.type === 'Datetime') {
    const instant = new Date(trimmed);
    return Number.isNaN(instant.getTime()) ? undefined : instant.toISOString();
  }
  if (entry.type === 'Selection') return entry.choices?.some(([key]) => key === trimmed) ? trimmed : undefined;
  return trimmed;
}

/**
 * The Q-expression of one filter; null when the field or condition is unknown (a stale URL).
 * @param {FieldFilter} filter @param {Record<string, RegistryEntry>} registry
 * @returns {string | null}
 */
export function filterExpression(filter, registry) {
  const entry = registry[filter.field];
  const op = OPS[filter.op];
  if (!entry || !op || !operatorsFor(entry).includes(op)) return null;
  if (!op.needsValue) {
    const path = op.lookup ? `${filter.field}__${op.lookup}` : filter.field;
    return qCondition(path, op.fixed);
  }
  if (filter.value === undefined || filter.value === null || filter.value === '') return null;
  const relational = entry.type === 'ManyToOne' || entry.type === 'ManyToMany' || entry.type === 'OneToMany';
  // A relation is matched by the linked record's name, as a person reads it in the list.
  const base = relational ? `${filter.field}__display_name` : filter.field;
  const condition = qCondition(op.lookup ? `${base}__${op.lookup}` : base, filter.value);
  return filter.op === 'not_contains' ? `~${condition}` : condition;
}

/**
 * The filter as a sentence fragment: `Deadline is before 03/02/2001`.
 * @param {FieldFilter} filter @param {Record<string, RegistryEntry>} registry @param {string} lang
 */
export function filterLabel(filter, registry, lang) {
  const entry = registry[filter.field];
  const op = OPS[filter.op];
  if (!entry || !op) return filter.field;
  if (!op.needsValue) return `${entry.label} ${op.label}`;
  let shown = String(filter.value ?? '');
  if (['Integer', 'Float', 'Monetary', 'Date', 'Datetime', 'Selection'].includes(entry.type)) {
    shown = formatValue({ ...entry, type: entry.type === 'Monetary' ? 'Float' : entry.type }, filter.value, { lang });
  }
  const quoted = ['Char', 'Text', 'ManyToOne', 'ManyToMany', 'OneToMany'].includes(entry.type) ? `“${shown}”` : shown;
  return `${entry.label} ${op.label} ${quoted}`;
}
