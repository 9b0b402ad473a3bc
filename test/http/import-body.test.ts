/**
 * The import route's JSON body parser (`src/http/routes/import-body.ts`, issue 25 item 3) reads
 * exactly what `JSON.parse` reads — any object, however its strings are escaped or its values
 * spaced — in pieces, refusing what `JSON.parse` refuses with a 400, and a piece over its bound
 * before parsing it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../src/errors.js';
import { MAX_PIECE_BYTES, parseImportBody } from '../../src/http/routes/import-body.js';

const parse = (text: string) => parseImportBody(Buffer.from(text));

describe('the import body parser', () => {
  it('reads any JSON object as JSON.parse does, whatever its spacing and escapes', async () => {
    const tricky = fc.oneof(fc.string(), fc.constantFrom('\\', '"', '\\"', '\\\\"', '\u2028', 'é', '😀', '[', ']', '{', '}', ',', ':'));
    const value = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, tricky, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(tricky, tie('value'), { maxKeys: 4 })),
    })).value;
    await fc.assert(fc.asyncProperty(fc.dictionary(tricky, value, { maxKeys: 6 }), fc.constantFrom(0, 1, '\t', ' \n '), async (object, space) => {
      const text = JSON.stringify(object, null, space);
      expect(await parse(text)).toEqual(JSON.parse(text));
    }), { seed: 25_03, numRuns: 300 });
  });

  it('an empty body is no body; anything but an object is a 400; a key __proto__ stays a key', async () => {
    expect(await parse('  ')).toBeUndefined();
    await expect(parse('[["name"]]')).rejects.toThrow(/the body must be a JSON object/);
    const body = await parse('{"__proto__": {"fields": ["x"]}, "data": []}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(Object.keys(body)).toEqual(['__proto__', 'data']);
    expect((body as { fields?: unknown }).fields).toBeUndefined();
  });

  it.each([
    ['a string never closed', '{"fields": ["name]}'],
    ['a missing comma', '{"fields": ["name"] "data": []}'],
    ['a missing colon', '{"fields" ["name"]}'],
    ['a trailing comma in an array', '{"data": [[1],]}'],
    ['a bad literal', '{"dry_run": tru}'],
    ['something after the object', '{"data": []} []'],
    ['an array never closed', '{"data": [[1], [2]'],
  ])('%s is a 400, as JSON.parse refuses it', async (_label, text) => {
    await expect(parse(text)).rejects.toBeInstanceOf(BadRequest);
    expect(() => JSON.parse(text)).toThrow();
  });

  it(`refuses one piece over ${MAX_PIECE_BYTES / 2 ** 20} MiB of JSON before parsing it, naming it`, async () => {
    const row = `[${Array.from({ length: 900 }, () => JSON.stringify('q'.repeat(10_000))).join(',')}]`;
    await expect(parse(`{"fields": ["name"], "data": [["n"], ${row}]}`)).rejects.toThrow(/'data' item 1 is larger than 8 MiB of JSON/);
  });
});
