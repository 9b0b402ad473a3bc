import { describe, expect, it } from 'vitest';
import { assertValidDatabaseName, isValidDatabaseName } from '../../src/db/database-name.js';
import { BadRequest } from '../../src/errors.js';

describe('assertValidDatabaseName', () => {
  it.each(['a', 'acme', 'acme_2024', 'a_', 'z9', 'a'.repeat(63), 'postgresql', 'template', 'pgx', 'p_g'])(
    'accepts %j',
    (name) => {
      expect(assertValidDatabaseName(name)).toBe(name);
      expect(isValidDatabaseName(name)).toBe(true);
    },
  );

  it.each([
    ['SQL injection', 'a"; DROP DATABASE x; --'],
    ['single quote', "a'b"],
    ['path traversal', '../etc'],
    ['absolute path', '/etc/passwd'],
    ['dot', 'a.b'],
    ['slash', 'a/b'],
    ['backslash', 'a\\b'],
    ['uppercase', 'Acme'],
    ['leading digit', '1acme'],
    ['leading underscore', '_acme'],
    ['hyphen', 'acme-db'],
    ['space', 'acme db'],
    ['newline', 'acme\n'],
    ['NUL byte', 'acme\0'],
    ['non-ASCII letter', 'acmé'],
    ['empty', ''],
    ['too long (64)', 'a'.repeat(64)],
  ])('refuses %s', (_label, name) => {
    expect(() => assertValidDatabaseName(name)).toThrow(BadRequest);
    expect(() => assertValidDatabaseName(name)).toThrow(/lowercase letters, digits/);
    expect(isValidDatabaseName(name)).toBe(false);
  });

  it.each(['postgres', 'template0', 'template1', 'pg_', 'pg_catalog', 'pg_anything'])('refuses reserved %j', (name) => {
    expect(() => assertValidDatabaseName(name)).toThrow(BadRequest);
    expect(() => assertValidDatabaseName(name)).toThrow(/reserved/);
  });

  it.each([undefined, null, 42, {}, ['acme'], true])('refuses non-string %j', (name) => {
    expect(() => assertValidDatabaseName(name)).toThrow(BadRequest);
    expect(() => assertValidDatabaseName(name)).toThrow(/Invalid database name/);
  });

  it('quotes the offending name (escaped and truncated) in the message', () => {
    expect(() => assertValidDatabaseName('a"; DROP DATABASE x; --')).toThrow('"a\\"; DROP DATABASE x; --"');
    const long = 'b'.repeat(500);
    let message = '';
    try {
      assertValidDatabaseName(long);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('b'.repeat(70) + '…');
    expect(message.length).toBeLessThan(250);
  });
});
