/**
 * The refusal of a link to ids that do not exist for the caller — missing or hidden alike, same
 * status, error and detail, so a write can never probe which hidden ids exist.
 */
import { ValidationError } from '../errors.js';
import type { Field } from './fields/field.js';

export function missingReference(field: Field, targetName: string, ids: readonly number[]): ValidationError {
  return new ValidationError(`Field '${field.name}': ${targetName} ${ids.slice(0, 5).join(', ')} does not exist`, { field: field.name, model: field.model.name });
}
