/**
 * Which item of a bulk call an error is about (CONTRACTS C1): a bulk create, update or clone
 * refuses the whole call with a 400 whose `detail` starts with `item <index>: ` (0-based, in the
 * body's order). The write paths take, per record they write, the item it comes from (`items`: a
 * bulk route's index, the import's row; a line takes its parent's), and label what they can
 * attribute to one record: its values, its links, what computing its stored fields threw, the
 * database's key violations (`item-keys.ts`). Errors of the whole batch (a model's `_check_change`
 * over every record) keep their own wording unless every record comes from one item.
 *
 * The item travels on the error as data (`FieldForgeError.item`), the message stays as it was
 * thrown: the HTTP layer writes the `item <index>: ` of the wire (`http/error-handler.ts`), the
 * import reads the row, and nobody reads either out of a message.
 */
import { FieldForgeError } from '../../errors.js';
import type { ModelMeta } from '../model-meta.js';

/** Per record of a write, the item it comes from (a bulk route's index, an import's row). */
export type ItemIndexes = readonly number[];

const FAILED_RECORD = Symbol('failedRecord');

type Marked = { [FAILED_RECORD]?: { meta: ModelMeta; id: number } };

/**
 * Notes on a refusal of an item's values that it is about item `index`, once — the innermost write
 * that knows the item labels it: a 400 (bad value, rule of the data, key violation) or a 403 an
 * item's own values caused (a company the caller may not assign), the status unchanged. Other
 * errors pass as they are: a 404 names the id itself, a 500 is not about an item.
 */
export function labelItem<E>(err: E, index: number | undefined): E {
  if (index === undefined || !(err instanceof FieldForgeError) || (err.status !== 400 && err.status !== 403)) return err;
  err.forItem(index);
  return err;
}

/** The item `err` was labelled with (`labelItem`); undefined if none. */
export function itemOf(err: unknown): number | undefined {
  return err instanceof FieldForgeError ? err.item : undefined;
}

/** Runs `fn`, labelling what it throws with item `index` (when given). */
export function atItem<T>(index: number | undefined, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw labelItem(err, index);
  }
}

/** The async form of `atItem`. */
export async function atItemAsync<T>(index: number | undefined, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw labelItem(err, index);
  }
}

/**
 * Notes on an error which record it was thrown for (a compute method failing on one record of a
 * batch), so the write that created or changed that record can name its item.
 */
export function markFailedRecord<E>(err: E, meta: ModelMeta, id: number): E {
  if (typeof err === 'object' && err !== null && !(err as Marked)[FAILED_RECORD]) {
    (err as Marked)[FAILED_RECORD] = { meta, id };
  }
  return err;
}

export function failedRecord(err: unknown): { meta: ModelMeta; id: number } | undefined {
  return typeof err === 'object' && err !== null ? (err as Marked)[FAILED_RECORD] : undefined;
}

/** The one item every record of a write comes from, if there is exactly one. */
export function soleItem(items: ItemIndexes | undefined): number | undefined {
  if (!items?.length) return undefined;
  const first = items[0]!;
  return items.every((i) => i === first) ? first : undefined;
}
