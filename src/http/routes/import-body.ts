/**
 * The JSON body of `POST /api/import/{model}` parsed in event-loop turns (issue 25): the body may
 * be 100 MiB, and one `JSON.parse` of it holds its worker for most of a second while every other
 * request waits. The body is an object whose values are parsed one by one, and an array value
 * (`data`, `fields`) element by element — each piece by `JSON.parse` itself, so what is valid JSON
 * and what it means stay exactly the platform's — with a turn given to the event loop whenever
 * one has run 10 ms (`EventLoopTurns`). Only the boundaries of the pieces are found here, by
 * scanning for brackets outside strings.
 *
 * One piece (a row of `data`) larger than `MAX_PIECE_BYTES` is refused as soon as the scan passes
 * it, before it is parsed: the import's own bounds (1,000 columns, 1 MiB of text per row) are
 * checked on the parsed rows, and no row within them is anywhere near this size. An empty body
 * is no body (as the app's own JSON parser has it); anything but an object is refused.
 */
import { EventLoopTurns } from '../../api/import/event-loop-turns.js';
import { BadRequest } from '../../errors.js';

/** Bytes of JSON one value or array element may take. */
export const MAX_PIECE_BYTES = 8 * 1024 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

export async function parseImportBody(body: Buffer): Promise<unknown> {
  const scan = new Scanner(body);
  const turns = new EventLoopTurns();
  scan.skipSpace();
  if (scan.done) return undefined;
  scan.expect(OPEN_BRACE, 'the body must be a JSON object');
  const out: Record<string, unknown> = {};
  scan.skipSpace();
  if (scan.peek() === CLOSE_BRACE) scan.pos++;
  else {
    for (;;) {
      scan.skipSpace();
      if (scan.peek() !== QUOTE) scan.fail('a key (a string) was expected');
      const key = scan.parsePiece(scan.stringEnd(scan.pos), 'a key') as string;
      scan.skipSpace();
      scan.expect(COLON, "':' was expected after a key");
      scan.skipSpace();
      const named = `'${key.slice(0, 40)}'`;
      const value = scan.peek() === OPEN_BRACKET ? await parseArray(scan, turns, named) : scan.parsePiece(scan.valueEnd(named), named);
      // Defined, not assigned: a key `__proto__` stays a key (and is refused as unknown later).
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      if (turns.due()) await turns.next();
      scan.skipSpace();
      if (scan.peek() === COMMA) {
        scan.pos++;
        continue;
      }
      scan.expect(CLOSE_BRACE, "',' or '}' was expected");
      break;
    }
  }
  scan.skipSpace();
  if (!scan.done) scan.fail('nothing may follow the object');
  return out;
}

async function parseArray(scan: Scanner, turns: EventLoopTurns, named: string): Promise<unknown[]> {
  const items: unknown[] = [];
  scan.pos++; // [
  scan.skipSpace();
  if (scan.peek() === CLOSE_BRACKET) {
    scan.pos++;
    return items;
  }
  for (;;) {
    scan.skipSpace();
    const what = `${named} item ${items.length}`;
    items.push(scan.parsePiece(scan.valueEnd(what), what));
    if (turns.due()) await turns.next();
    scan.skipSpace();
    if (scan.peek() === COMMA) {
      scan.pos++;
      continue;
    }
    scan.expect(CLOSE_BRACKET, "',' or ']' was expected");
    return items;
  }
}

/** A position in the body, and the boundaries of the JSON values at it. */
class Scanner {
  pos = 0;

  constructor(private readonly body: Buffer) {}

  get done(): boolean {
    return this.pos >= this.body.length;
  }

  peek(): number | undefined {
    return this.body[this.pos];
  }

  skipSpace(): void {
    const b = this.body;
    while (this.pos < b.length && (b[this.pos] === 0x20 || b[this.pos] === 0x0a || b[this.pos] === 0x0d || b[this.pos] === 0x09)) this.pos++;
  }

  expect(byte: number, message: string): void {
    if (this.peek() !== byte) this.fail(message);
    this.pos++;
  }

  fail(message: string): never {
    throw new BadRequest(`The request body is not valid JSON: ${message} (at byte ${this.pos})`);
  }

  /** The value from `pos` to `end`, parsed; `pos` moves past it. */
  parsePiece(end: number, what: string): unknown {
    const text = this.body.toString('utf8', this.pos, end);
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      return this.fail(`${what}: ${(err as Error).message.slice(0, 120)}`);
    } finally {
      this.pos = end;
    }
  }

  /** Where the string starting at `at` (its opening quote) ends, past its closing quote. */
  stringEnd(at: number): number {
    for (let from = at + 1; ;) {
      const quote = this.body.indexOf(QUOTE, from);
      if (quote < 0) this.fail('a string is never closed');
      let slashes = 0;
      while (this.body[quote - 1 - slashes] === BACKSLASH) slashes++;
      if (slashes % 2 === 0) return quote + 1;
      from = quote + 1;
    }
  }

  /** Where the value starting at `pos` ends (refused past `MAX_PIECE_BYTES`). */
  valueEnd(what: string): number {
    const b = this.body;
    const start = this.pos;
    const limit = Math.min(b.length, start + MAX_PIECE_BYTES + 1);
    const c = b[start];
    let end: number;
    if (c === QUOTE) end = this.stringEnd(start);
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      let depth = 0;
      let i = start;
      for (; i < limit; i++) {
        const byte = b[i];
        if (byte === QUOTE) i = this.stringEnd(i) - 1;
        else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) depth++;
        else if ((byte === CLOSE_BRACKET || byte === CLOSE_BRACE) && --depth === 0) break;
      }
      if (i >= limit) {
        if (limit === b.length) this.fail(`${what} is never closed`);
        i = limit;
      }
      end = i + 1;
    } else {
      end = start;
      while (end < limit && b[end] !== COMMA && b[end] !== CLOSE_BRACKET && b[end] !== CLOSE_BRACE && b[end] !== 0x20 && b[end] !== 0x0a && b[end] !== 0x0d && b[end] !== 0x09) end++;
      if (end === start) this.fail(`${what}: a value was expected`);
    }
    if (end - start > MAX_PIECE_BYTES) {
      throw new BadRequest(`${what} is larger than ${MAX_PIECE_BYTES / 2 ** 20} MiB of JSON: an import takes at most 1,000 columns and 1 MiB of text per row`);
    }
    return end;
  }
}
