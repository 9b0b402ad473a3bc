/**
 * The one error catalogue (`src/errors.ts`, issue 26 item 5): every error class the platform
 * answers with, each with its stable `error` code and status. The list below is the wire's: a code
 * renamed, dropped or reused fails here, and so does an error class declared anywhere else in src/.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as catalogue from '../../src/errors.js';
import { codeOf, FieldForgeError, UserError } from '../../src/errors.js';

/** Class → [code, status]: what clients read in `error`, and the status it comes with. */
const CODES: Record<string, [string, number]> = {
  FieldForgeError: ['FieldForgeError', 500],
  ValidationError: ['ValidationError', 400],
  UserError: ['UserError', 400],
  BadRequest: ['BadRequest', 400],
  QuerySyntaxError: ['QuerySyntaxError', 400],
  AuthenticationError: ['AuthenticationError', 401],
  AccessError: ['AccessError', 403],
  NotFound: ['NotFound', 404],
  DatabaseNotFound: ['DatabaseNotFound', 404],
  MethodNotAllowed: ['MethodNotAllowed', 405],
  PayloadTooLarge: ['PayloadTooLarge', 413],
  TooManyRequests: ['TooManyRequests', 429],
  UnsupportedMediaType: ['UnsupportedMediaType', 415],
  DatabaseBusy: ['DatabaseBusy', 503],
  DatabaseUnavailable: ['DatabaseUnavailable', 503],
  StatementTimeout: ['StatementTimeout', 503],
  RealtimeUnavailable: ['RealtimeUnavailable', 503],
  ModuleError: ['ModuleError', 400],
  FileStorageError: ['FileStorageError', 503],
  InsufficientStorage: ['InsufficientStorage', 507],
  ReportEngineUnavailable: ['ReportEngineUnavailable', 503],
  InternalError: ['InternalError', 500],
};

type ErrorClass = typeof FieldForgeError;

const classes = Object.entries(catalogue).filter(
  (entry): entry is [string, ErrorClass] => typeof entry[1] === 'function' && (entry[1] === FieldForgeError || entry[1].prototype instanceof FieldForgeError),
);

describe('the error catalogue', () => {
  it('lists every class with its code and status, as the wire shows them', () => {
    const listed = Object.fromEntries(classes.map(([name, cls]) => [name, [cls.code, new cls('probe').status]]));
    expect(listed).toEqual(CODES);
  });

  it('gives each class a code of its own, declared on the class and carried by its errors', () => {
    const codes = classes.map(([, cls]) => codeOf(cls));
    expect(new Set(codes).size).toBe(codes.length);
    for (const [name, cls] of classes) {
      expect(Object.hasOwn(cls, 'code'), `${name} declares its code`).toBe(true);
      expect(new cls('probe').name).toBe(cls.code);
    }
  });

  it("knows a module's own subclass by its class name, as before", () => {
    class OutOfStock extends UserError {}
    const err = new OutOfStock('none left');
    expect([codeOf(OutOfStock), err.name, err.status]).toEqual(['OutOfStock', 'OutOfStock', 400]);
  });

  it('is the only place in src/ that declares an error class clients see', async () => {
    const src = join(import.meta.dirname, '../../src');
    const names = classes.map(([name]) => name).join('|');
    const declaring = new RegExp(`class \\w+ extends (?:${names})\\b`);
    const elsewhere: string[] = [];
    for (const entry of await readdir(src, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(entry.parentPath, entry.name);
      if (path === join(src, 'errors.ts')) continue;
      if (declaring.test(await readFile(path, 'utf8'))) elsewhere.push(relative(src, path));
    }
    expect(elsewhere).toEqual([]);
  });
});
