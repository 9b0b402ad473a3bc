/**
 * A SELECT built once and run many times with another value in one place (its slot): its text,
 * and the variant carrying the request guard, are assembled once, so a run neither builds SQL nor
 * hashes a new text to find its prepared statement. Whom and what it may be reused for is the
 * caller's to key (`read/read-by-id.ts`).
 */
import type { SqlFragment } from '../db/sql-fragment.js';
import { runGuarded, selectStatementText } from './execute-sql.js';

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

  /** `slot`: the position among `rest`'s values of the one that changes from run to run. */
  constructor(
    private readonly columns: SqlFragment,
    private readonly rest: SqlFragment,
    private readonly slot: number,
  ) {}

  /** Runs it with `value` in the slot (and the request guard while it is pending, as `runSelect`). */
  run<R extends Record<string, unknown>>(value: unknown): Promise<R[]> {
    return runGuarded<R>((guard) => {
      const variant = guard ? this.#guardedVariant(guard) : (this.#plain ??= this.#variant(null));
      const values = variant.statement.values.slice();
      if (guard) for (let i = 0; i < guard.values.length; i++) values[this.columns.values.length + i] = guard.values[i];
      values[variant.restAt + this.slot] = value;
      return variant.statement.withValues(values);
    });
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
