/**
 * Storage failures the client can act on, with a message that says nothing was saved (the unit of
 * work is rolled back with them, so no row is created).
 */
import { FieldForgeError } from '../errors.js';

/** The bucket or disk refused or failed the operation. */
export class FileStorageError extends FieldForgeError {
  override readonly status = 503;
}

/** The local disk is full (ENOSPC/EDQUOT). */
export class InsufficientStorage extends FieldForgeError {
  override readonly status = 507;
}
