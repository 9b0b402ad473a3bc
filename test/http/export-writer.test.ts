/**
 * The export's XLSX writer under backpressure (src/api/export/xlsx-stream-writer.ts): while nobody
 * reads its output it stops taking rows after a bounded amount of bytes, whatever the number of
 * rows still to come — which is what keeps an export's memory flat when the client is slow — and
 * resumes when the output is read; an output destroyed meanwhile (a client hanging up) fails the
 * waiting write instead of leaving it pending forever. The file it then completes is a ZIP whose
 * every entry's CRC-32 and size check out (read back by yauzl). Its text buffers are reused, so
 * many exports at once leave no pile of garbage buffers behind (issue 25).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { fromBuffer } from 'yauzl';
import { XlsxStreamWriter } from '../../src/api/export/xlsx-stream-writer.js';

const run = promisify(execFile);
const row = (i: number) => [`Row ${i} with some text to fill the chunk`, i, i % 2 === 0, `2026-01-${String(1 + (i % 28)).padStart(2, '0')}`];

/** Writes rows until a write has to wait; answers how many went in and the waiting promise. */
async function fillUntilBlocked(xlsx: XlsxStreamWriter, max: number): Promise<{ rows: number; waiting: Promise<void> | null }> {
  for (let i = 1; i <= max; i++) {
    const room = xlsx.writeRow(row(i));
    if (!room) continue;
    // A flush that found room resolves on the next turns; one that did not stays pending.
    const state = await Promise.race([room.then(() => 'free' as const), new Promise((r) => setTimeout(() => r('blocked'), 50))]);
    if (state === 'blocked') return { rows: i, waiting: room };
  }
  return { rows: max, waiting: null };
}

/** The entries of a ZIP, each read through (yauzl checks sizes; the CRC is computed here and compared). */
function entries(zip: Buffer): Promise<{ name: string; bytes: number }[]> {
  return new Promise((resolve, reject) => {
    fromBuffer(zip, { lazyEntries: true, validateEntrySizes: true }, (err, file) => {
      if (err || !file) return reject(err ?? new Error('not a zip'));
      const out: { name: string; bytes: number }[] = [];
      file.on('end', () => resolve(out)).on('error', reject);
      file.on('entry', (entry) => file.openReadStream(entry, (e, stream) => {
        if (e || !stream) return reject(e ?? new Error('no stream'));
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c)).on('error', reject).on('end', () => {
          const data = Buffer.concat(chunks);
          if (crc32(data) !== entry.crc32) return reject(new Error(`CRC mismatch in ${entry.fileName}`));
          out.push({ name: entry.fileName, bytes: data.length });
          file.readEntry();
        });
      }));
      file.readEntry();
    });
  });
}

describe('the XLSX writer', () => {
  it('stops taking rows while its output is not read, after a bounded number of bytes, and resumes when read', async () => {
    const xlsx = new XlsxStreamWriter({ sheetName: 'Backpressure' });
    const { rows, waiting } = await fillUntilBlocked(xlsx, 500_000);
    expect(waiting, 'a write never had to wait for the reader').not.toBeNull();
    // Bounded by stream buffers, not by the rows: far fewer than were offered.
    expect(rows).toBeLessThan(100_000);
    expect(xlsx.output.readableLength).toBeLessThan(1024 * 1024);
    const chunks: Buffer[] = [];
    const finished = new Promise<void>((resolve) => xlsx.output.pipe(new Writable({
      write(chunk: Buffer, _e, done) { chunks.push(chunk); done(); },
    })).on('finish', resolve));
    await waiting;
    for (let i = rows + 1; i <= rows + 1000; i++) await xlsx.writeRow(row(i));
    await xlsx.end();
    await finished;
    const names = (await entries(Buffer.concat(chunks))).map((e) => e.name);
    expect(names).toEqual(['[Content_Types].xml', '_rels/.rels', 'xl/workbook.xml', 'xl/_rels/workbook.xml.rels', 'xl/worksheets/sheet1.xml', 'xl/styles.xml']);
  });

  it('reuses its buffers: 20 exports at once, with the server\'s node flags, hold a few MiB of them, not one per chunk of XML', async () => {
    // The server's young generation is small (the shebang's --max-semi-space-size), so garbage
    // buffers outlive their exports: measured in a node run as the server runs.
    const shebang = readFileSync(new URL('../../bin/fieldforge.js', import.meta.url), 'utf8').split('\n', 1)[0]!.split(/\s+/);
    const flags = shebang.filter((word) => word.startsWith('--'));
    const script = fileURLToPath(new URL('../fixtures/export/concurrent-writers.ts', import.meta.url));
    const { stdout } = await run(process.execPath, [...flags, '--import', 'tsx', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    const { most } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { most: number };
    // A new buffer per 64 K characters of XML let ~53 MiB of them wait for the collector (issue 25); ~13 MiB now.
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThan(24 * 1024 * 1024);
  }, 60_000);

  it('fails a waiting write when its output is destroyed, as when a client hangs up', async () => {
    const xlsx = new XlsxStreamWriter({ sheetName: 'Gone' });
    const { waiting } = await fillUntilBlocked(xlsx, 500_000);
    expect(waiting).not.toBeNull();
    xlsx.output.destroy();
    await expect(waiting).rejects.toThrow(/closed/);
    // Later rows are refused too (as a rejected promise, never a throw).
    await expect(xlsx.writeRow(row(0))).rejects.toThrow(/closed/);
  });
});
