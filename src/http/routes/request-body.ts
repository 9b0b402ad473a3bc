/**
 * Typed reading of request bodies: each accessor either returns a value of the expected type or
 * throws a `BadRequest` naming the key, so handlers stay free of hand-written checks.
 */
import { BadRequest } from '../../errors.js';
import { isRecordId } from '../../orm/fields/relational-fields.js';

export class RequestBody {
  private readonly body: Record<string, unknown>;

  constructor(raw: unknown) {
    if (raw === undefined || raw === null) raw = {};
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new BadRequest('The request body must be a JSON object');
    this.body = raw as Record<string, unknown>;
  }

  get raw(): Record<string, unknown> {
    return this.body;
  }

  has(key: string): boolean {
    return this.body[key] !== undefined && this.body[key] !== null;
  }

  string(key: string): string | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw new BadRequest(`'${key}' must be a string`);
    return v;
  }

  boolean(key: string): boolean {
    const v = this.body[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') throw new BadRequest(`'${key}' must be true or false`);
    return v;
  }

  integer(key: string, min: number, max: number): number | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new BadRequest(`'${key}' must be an integer from ${min} to ${max}`);
    }
    return v;
  }

  strings(key: string): string[] | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new BadRequest(`'${key}' must be an array of strings`);
    return v as string[];
  }

  ids(key: string): number[] | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every(isRecordId)) {
      // Ids beyond int32 would be refused by PostgreSQL itself, with an error naming no key.
      throw new BadRequest(`'${key}' must be an array of record ids`);
    }
    return v as number[];
  }

  object(key: string): Record<string, unknown> | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) throw new BadRequest(`'${key}' must be an object`);
    return v as Record<string, unknown>;
  }
}

/** A positive integer path parameter (`/api/fetch/Task/12`). */
export function recordId(value: string): number {
  const id = Number(value);
  if (!/^\d{1,10}$/.test(value) || !isRecordId(id)) {
    throw new BadRequest(`'${value.slice(0, 20)}' is not a record id`);
  }
  return id;
}
