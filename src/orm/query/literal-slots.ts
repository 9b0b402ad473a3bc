/**
 * The shape of a filter: its structure with each comparable literal taken out, so that
 * `Q(state='sale')` and `Q(state='sent')` compile to one statement, run with another value in one
 * place (`read/compiled-tree-read.ts`).
 *
 * A literal is taken out (a slot) when it is a string or a number compared by `exact`, `not`,
 * `gt`, `gte`, `lt` or `lte`: its bound value is then the field's `toFilterValue` of it and nothing
 * else, so a run can convert a new literal exactly as compiling would (with the same refusal).
 * Every other value — None, booleans, lists, variables, the text of `contains` and its kin, whose
 * bound value is a pattern built from it — stays in the shape as written.
 *
 * Compiling a shape marks each slot's bound value with a `LiteralSlot` (compile-filter.ts), which no
 * value of the statement can be mistaken for: the statement's other values (a rule's user, a
 * limit) never move, whatever they equal.
 */
import { QuerySyntaxError, ValidationError } from '../../errors.js';
import type { Field } from '../fields/field.js';
import type { ConditionNode, FilterNode, Lookup } from './filter-ast.js';
import { isLookup } from './resolve-path.js';

/** The lookups whose bound value is the field's conversion of the literal alone. */
const SLOT_LOOKUPS: ReadonlySet<Lookup> = new Set(['exact', 'not', 'gt', 'gte', 'lt', 'lte']);

/** A bound value that a run replaces: the slot's number and the value it was compiled with. */
export class LiteralSlot {
  constructor(
    readonly slot: number,
    readonly value: unknown,
  ) {}
}

export interface FilterShape {
  /** The filters' structure, with `?s` / `?n` where a slot is. */
  readonly key: string;
  /** The conditions whose literal is a slot, in slot order. */
  readonly slots: readonly ConditionNode[];
}

/** The shape of `filters`; `slots` are their conditions in the order a compile meets them. */
export function filterShape(filters: readonly FilterNode[]): FilterShape {
  const slots: ConditionNode[] = [];
  const parts: string[] = [];
  const walk = (node: FilterNode): void => {
    switch (node.kind) {
      case 'all':
        parts.push('Q()');
        return;
      case 'not':
        parts.push('~(');
        walk(node.child);
        parts.push(')');
        return;
      case 'and':
      case 'or':
        parts.push(node.kind === 'and' ? '&(' : '|(');
        for (const child of node.children) {
          walk(child);
          parts.push(',');
        }
        parts.push(')');
        return;
      case 'condition': {
        parts.push(node.segments.join('__'), '=');
        if (isSlot(node)) {
          slots.push(node);
          parts.push(typeof node.value === 'string' ? '?s' : '?n');
        } else {
          parts.push(JSON.stringify(node.value));
        }
      }
    }
  };
  filters.forEach((f) => {
    walk(f);
    parts.push(';');
  });
  return { key: parts.join(''), slots };
}

function isSlot(node: ConditionNode): boolean {
  const value = node.value;
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  const last = node.segments[node.segments.length - 1]!;
  return node.segments.length === 1 || !isLookup(last) ? true : SLOT_LOOKUPS.has(last as Lookup);
}

/**
 * What a compile records of the slots it meets: for each slot's condition, the field its literal is
 * converted by. Held by the query's scope (and its sub-scopes) while a shape compiles.
 */
export class LiteralSlots {
  readonly #slotOf = new Map<ConditionNode, number>();
  readonly #fields: (Field | undefined)[];
  #conflict = false;

  constructor(slots: readonly ConditionNode[]) {
    slots.forEach((node, i) => this.#slotOf.set(node, i));
    this.#fields = slots.map(() => undefined);
  }

  /**
   * The bound value of `node`'s literal, converted by `field` (`converted`): marked when `node` is
   * a slot compared by `lookup`, as is otherwise.
   */
  mark(node: ConditionNode, field: Field, lookup: Lookup, converted: unknown): unknown {
    const slot = this.#slotOf.get(node);
    if (slot === undefined || !SLOT_LOOKUPS.has(lookup)) return converted;
    const known = this.#fields[slot];
    // One condition is one comparison: met twice (a count beside the page), it is by the same
    // field. Were it ever another, the shape is simply not reused (`fields()` is then null).
    if (known !== undefined && known !== field) this.#conflict = true;
    this.#fields[slot] = field;
    return new LiteralSlot(slot, converted);
  }

  /** The field of each slot, once the compile met them all; null when one was never met (or met with two). */
  fields(): readonly Field[] | null {
    return !this.#conflict && this.#fields.every((f) => f !== undefined) ? (this.#fields as Field[]) : null;
  }
}

/** A slot's literal converted as compiling it would, with the same refusal (`compareColumn`). */
export function convertLiteral(field: Field, node: ConditionNode): unknown {
  try {
    return field.toFilterValue(node.value);
  } catch (err) {
    if (err instanceof ValidationError) throw new QuerySyntaxError(err.message, node.position);
    throw err;
  }
}
