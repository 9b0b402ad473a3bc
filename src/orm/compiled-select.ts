/**
 * A SELECT built once and run many times with other values in a few places (its slots): its text,
 * and the variant carrying the request guard, are assembled once, so a run neither builds SQL nor
 * hashes a new text to find its prepared statement. Whom and what it may be reused for is the
 * caller's to key (`read/read-by-id.ts`, `read/compiled-tree-read.ts`).
 */
import type { SqlFragment } from '../db/sql-fragment.js';
import { runGuarded, selectStatementText } from './execute-sql.js';
import { LiteralSlot } from './query/literal-slots.js';

/** Where a slot's value goes: among the values of the columns, or of the rest. */
interface Place {
  inColumns: boolean;
  index: number;
}

interface Variant {
  statement: SqlFragment;
  /** The guard column it was built with (null: none); another guard's text builds another variant. */
  guard: SqlFragment | null;
  /** Where the values of `rest` start among the statement's. */
  restAt: number;
}

export class CompiledSelect {
  #plain: Variant | undefined;
  #guarded: Variant | undefined;

  /** `places`: per slot, where its value goes (a slot may appear more than once). */
  private constructor(
    private readonly columns: SqlFragment,
    private readonly rest: SqlFragment,
    private readonly places: readonly (readonly Place[])[],
  ) {}

  /** One slot: the position among `rest`'s values of the one that changes from run to run. */
  static withSlot(columns: SqlFragment, rest: SqlFragment, slot: number): CompiledSelect {
    return new CompiledSelect(columns, rest, [[{ inColumns: false, index: slot }]]);
  }

  /**
   * The slots are the `LiteralSlot` values of `columns` and `rest` (literal-slots.ts), kept as
   * the values they were compiled with; null when a slot of `slots` has no place.
   */
  static fromMarked(columns: SqlFragment, rest: SqlFragment, slots: number): CompiledSelect | null {
    const places: Place[][] = Array.from({ length: slots }, () => []);
    const unmarked = (fragment: SqlFragment, inColumns: boolean) => {
      let values: unknown[] | null = null;
      fragment.values.forEach((v, index) => {
        if (!(v instanceof LiteralSlot)) return;
        places[v.slot]!.push({ inColumns, index });
        (values ??= fragment.values.slice())[index] = v.value;
      });
      return values ? fragment.withValues(values) : fragment;
    };
    const plainColumns = unmarked(columns, true);
    const plainRest = unmarked(rest, false);
    return places.every((p) => p.length) ? new CompiledSelect(plainColumns, plainRest, places) : null;
  }

  /** Runs it with `values[i]` in slot i (and the request guard while it is pending, as `runSelect`). */
  run<R extends Record<string, unknown>>(slotValues: readonly unknown[]): Promise<R[]> {
    return runGuarded<R>((guard) => {
      const variant = guard ? this.#guardedVariant(guard) : (this.#plain ??= this.#variant(null));
      const values = variant.statement.values.slice();
      if (guard) for (let i = 0; i < guard.values.length; i++) values[this.columns.values.length + i] = guard.values[i];
      this.places.forEach((places, slot) => {
        for (const { inColumns, index } of places) values[(inColumns ? 0 : variant.restAt) + index] = slotValues[slot];
      });
      return variant.statement.withValues(values);
    }, undefined, true);
  }

  #guardedVariant(guard: SqlFragment): Variant {
    const held = this.#guarded;
    if (held && sameText(held.guard!, guard)) return held;
    return (this.#guarded = this.#variant(guard));
  }

  #variant(guard: SqlFragment | null): Variant {
    return {
      statement: selectStatementText(this.columns, guard, this.rest),
      guard,
      restAt: this.columns.values.length + (guard?.values.length ?? 0),
    };
  }
}

function sameText(a: SqlFragment, b: SqlFragment): boolean {
  if (a.strings.length !== b.strings.length) return false;
  for (let i = 0; i < a.strings.length; i++) if (a.strings[i] !== b.strings[i]) return false;
  return true;
}
