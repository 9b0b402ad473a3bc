/** The write path as one value, for the unit of work to hand to nested writes (`nested-writes.ts`). */
import { createRecords } from './create-records.js';
import { deleteRecords } from './delete-records.js';
import type { NestedWrites } from './nested-writes.js';
import { writeEach, writeRecords } from './write-records.js';

export const RECORD_WRITES: NestedWrites = Object.freeze({ createRecords, writeRecords, writeEach, deleteRecords });
