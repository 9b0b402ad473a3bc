/**
 * The record writes a write recurses into: lines created, updated or deleted inside their parent's
 * create or write (`write-relations.ts`), an attachment created or deleted for a file field
 * (`file-values.ts`). Those files cannot import the writes they recurse into (create → lines →
 * create would be an import cycle), so the unit of work carries them, handed over where units of
 * work start (`transaction.ts`, through `record-writes.ts`), as it carries the assignment flush.
 */
import type { createRecords } from './create-records.js';
import type { deleteRecords } from './delete-records.js';
import type { writeEach, writeRecords } from './write-records.js';

export interface NestedWrites {
  readonly createRecords: typeof createRecords;
  readonly writeRecords: typeof writeRecords;
  readonly writeEach: typeof writeEach;
  readonly deleteRecords: typeof deleteRecords;
}
