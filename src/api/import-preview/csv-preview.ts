/**
 * The first rows of a CSV upload, parsed by `csv-parse` as the bytes stream in and no further:
 * once `maxRows` records are read the parser ends, and the rest of the upload is dropped unparsed.
 *
 * - Encoding: UTF-8 (a BOM is dropped) unless the first 64 KiB are not valid UTF-8, then
 *   Windows-1252 — what spreadsheet programs write as "CSV" on Western Windows systems.
 * - Delimiter: `,`, `;` or tab, whichever occurs the same number of times (outside quotes) on each
 *   of the first lines — a European file's `1,5;2,25` rows pick `;` over their decimal commas;
 *   without a consistent one, the most frequent on the first line; `,` when none occurs.
 * - Cells are strings as written (no number guessing: a code `007` stays `007`); an empty cell is
 *   null; blank lines are skipped.
 * - Bounds (`import-limits.ts`): a record of more than 1,000 columns is refused as the parser
 *   reaches its 1,001st field (a 2 MB line of a million columns costs a thousand fields, not a
 *   million-element array), one of more than 1 MiB of text (a quote never closed) as it passes
 *   the bound; and the parser gets the text in pieces of 64 KiB, each in an event-loop turn of
 *   its own once a turn has run 10 ms, so other requests are answered meanwhile.
 */
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { BadRequest } from '../../errors.js';
import { EventLoopTurns } from '../import/event-loop-turns.js';
import { MAX_COLUMNS, MAX_RECORD_CHARS, recordTooLarge, tooManyColumns } from '../import/import-limits.js';
import { until, type UploadChunks } from './upload-chunks.js';

export type Cell = string | number | boolean | null;

const SAMPLE_BYTES = 64 * 1024;
const SAMPLE_LINES = 10;
const DELIMITERS = [',', ';', '\t'] as const;
/** Characters handed to the parser at once. */
const PARSE_PIECE = 16 * 1024;

export async function previewCsv(chunks: UploadChunks, maxRows: number): Promise<Cell[][]> {
  const sample = await chunks.peek(SAMPLE_BYTES);
  const encoding = isUtf8(sample, sample.length < SAMPLE_BYTES) ? 'utf-8' : 'windows-1252';
  const delimiter = detectDelimiter(new TextDecoder(encoding).decode(sample), sample.length < SAMPLE_BYTES);
  const rows: Cell[][] = [];
  const decoder = new TextDecoder(encoding); // drops a leading BOM by itself
  const turns = new EventLoopTurns();
  async function* text(): AsyncGenerator<string> {
    for await (const piece of until(chunks, () => rows.length >= maxRows)) {
      const text = decoder.decode(piece, { stream: true });
      // The parser takes a few milliseconds per 16 KiB of long fields: smaller pieces, shorter turns.
      for (let at = 0; at < text.length; at += PARSE_PIECE) {
        if (turns.due()) await turns.next();
        yield text.slice(at, at + PARSE_PIECE);
      }
    }
    yield decoder.decode();
  }
  const source = Readable.from(text(), { objectMode: false });
  const parser = source.pipe(parse({
    delimiter, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, max_record_size: MAX_RECORD_CHARS,
    // Called for each field as it ends: the column bound holds before the record is built.
    cast: (value: string, context: { index: number }) => {
      if (context.index >= MAX_COLUMNS) throw new TooManyColumns();
      return value;
    },
  }));
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      rows.push(record.map((cell) => (cell === '' ? null : cell)));
      if (rows.length >= maxRows) break;
    }
  } catch (err) {
    if (err instanceof TooManyColumns) throw tooManyColumns('The CSV file');
    const { code, lines } = err as { code?: unknown; lines?: unknown };
    if (code === 'CSV_MAX_RECORD_SIZE') throw recordTooLarge(`A record of the CSV file${typeof lines === 'number' ? ` (line ${lines})` : ''}`);
    throw new BadRequest(`The CSV file cannot be read: ${(err as Error).message.slice(0, 200)}`);
  } finally {
    source.unpipe();
    source.destroy();
  }
  return rows;
}

/** Thrown by the parser's field hook at the 1,001st field of a record. */
class TooManyColumns extends Error {}

/** Whether `bytes` are UTF-8; a multi-byte character cut at the end of a partial sample does not count against it. */
function isUtf8(bytes: Buffer, complete: boolean): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: !complete });
    return true;
  } catch {
    return false;
  }
}

/** The delimiter of a CSV text sample (see the file comment); `complete` when the sample is the whole file. */
export function detectDelimiter(sample: string, complete: boolean): string {
  const lines: number[][] = [];
  let counts = DELIMITERS.map(() => 0);
  let quoted = false;
  let ended = true;
  for (let i = 0; i < sample.length && lines.length < SAMPLE_LINES; i++) {
    const ch = sample[i]!;
    ended = false;
    if (ch === '"') quoted = !quoted; // an escaped "" toggles twice
    else if (quoted) continue;
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && sample[i + 1] === '\n') i++;
      if (counts.some((n) => n > 0) || lines.length) lines.push(counts);
      counts = DELIMITERS.map(() => 0);
      ended = true;
    } else {
      const k = DELIMITERS.indexOf(ch as (typeof DELIMITERS)[number]);
      if (k >= 0) counts[k]!++;
    }
  }
  // A last line cut by the sample's end would be short: it counts only when the file ends there.
  if (!ended && (complete || !lines.length) && lines.length < SAMPLE_LINES) lines.push(counts);
  if (!lines.length) return ',';
  const consistent = DELIMITERS.map((_, k) => lines[0]![k]! > 0 && lines.every((l) => l[k] === lines[0]![k]));
  const pool = consistent.some(Boolean) ? DELIMITERS.map((_, k) => k).filter((k) => consistent[k]) : DELIMITERS.map((_, k) => k);
  const best = pool.reduce((a, b) => (lines[0]![b]! > lines[0]![a]! ? b : a));
  return lines[0]![best]! > 0 ? DELIMITERS[best]! : ',';
}
