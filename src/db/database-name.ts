/**
 * The one gate every FieldForge database name passes before it reaches a file path (PGlite) or an
 * SQL identifier (PostgreSQL). The allowed alphabet is deliberately tiny so a name can never carry
 * a path separator, a dot, a quote or whitespace — that is what makes path traversal and SQL
 * injection through names impossible, not the quoting done later (which is only a second fence).
 */
import { BadRequest } from '../errors.js';

/** Lowercase letter first, then lowercase letters, digits or `_`; 63 chars = PostgreSQL's NAMEDATALEN - 1. */
const NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
/** Cluster databases we must never create, clone over or drop, and PostgreSQL's own `pg_` namespace. */
const RESERVED = new Set(['postgres', 'template0', 'template1']);
const RULE =
  'a database name must be 1-63 characters of lowercase letters, digits and "_", starting with a letter';

/** Returns `name` if it is a valid, non-reserved database name; throws `BadRequest` otherwise. */
export function assertValidDatabaseName(name: unknown): string {
  if (typeof name !== 'string') {
    throw new BadRequest(`Invalid database name (got ${name === null ? 'null' : typeof name}): ${RULE}`);
  }
  if (!NAME_PATTERN.test(name)) {
    throw new BadRequest(`Invalid database name ${quoteForMessage(name)}: ${RULE}`);
  }
  if (RESERVED.has(name) || name.startsWith('pg_')) {
    throw new BadRequest(
      `Invalid database name ${quoteForMessage(name)}: the name is reserved (postgres, template0, template1 and names starting with "pg_")`,
    );
  }
  return name;
}

/** True when `name` would pass `assertValidDatabaseName` (used to filter directory listings). */
export function isValidDatabaseName(name: unknown): name is string {
  try {
    assertValidDatabaseName(name);
    return true;
  } catch {
    return false;
  }
}

/** JSON-quotes the (possibly hostile) name so control characters are escaped, cut to keep messages short. */
function quoteForMessage(name: string): string {
  const MAX = 70;
  return JSON.stringify(name.length > MAX ? `${name.slice(0, MAX)}…` : name);
}
