/**
 * Runs compiled SQL in the current transaction and turns database constraint violations into
 * precise `ValidationError`s (which fields, which model) instead of 500s.
 */
import type { RawBuilder } from 'kysely';
import { ValidationError } from '../errors.js';
import { currentEnv } from './env.js';
import type { Registry } from './registry.js';

export async function runSql<R = Record<string, unknown>>(query: RawBuilder<R>): Promise<R[]> {
  const env = currentEnv();
  try {
    const result = await query.execute(env.trx);
    return result.rows;
  } catch (err) {
    throw translateDbError(err, env.registry);
  }
}

interface PgError {
  code?: string;
  constraint?: string;
  table?: string;
  column?: string;
  detail?: string;
}

function modelOfTable(registry: Registry, table: string | undefined): string {
  for (const meta of registry.models.values()) if (meta.table === table) return meta.verboseName;
  return table ?? 'record';
}

export function translateDbError(err: unknown, registry: Registry): unknown {
  const e = err as PgError;
  if (!e || typeof e.code !== 'string') return err;
  const info = e.constraint ? registry.constraints.get(e.constraint) : undefined;
  switch (e.code) {
    case '23505': {
      if (info) {
        const meta = registry.meta(info.model);
        return new ValidationError(
          `${meta.verboseName}: the combination of ${info.fields.map((f) => `'${f}'`).join(', ')} must be unique; another record already has these values`,
        );
      }
      return new ValidationError('A record with the same unique values already exists');
    }
    case '23503': {
      const field = info?.fields[0];
      if (e.detail?.includes('is still referenced')) {
        const referencing = info ? registry.meta(info.model).verboseName : modelOfTable(registry, e.table);
        return new ValidationError(
          `Cannot delete or change this record: ${referencing} records still refer to it${field ? ` through '${field}'` : ''} (on_delete RESTRICT)`,
        );
      }
      return new ValidationError(`The record referenced${field ? ` by '${field}'` : ''} does not exist`);
    }
    case '23502':
      return new ValidationError(`Field '${e.column?.replace(/_id$/, '')}' of ${modelOfTable(registry, e.table)} is required`);
    case '22001':
      return new ValidationError('A value is too long for its field');
    case '22003':
      return new ValidationError('A number is out of range for its field');
    case '22P02':
    case '22007':
    case '22008':
      return new ValidationError('A value has the wrong format for its field');
    case '22021': // a NUL character in text: PostgreSQL text cannot hold it
    case '22P05':
      return new ValidationError('A value contains a character that cannot be stored (the NUL character \\u0000)');
    default:
      return err;
  }
}
