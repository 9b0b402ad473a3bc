/**
 * No upload stalls the server (issue 25 item 3): `fieldforge serve` in a child process, and while
 * each of the worst inputs to the import preview (CSV and XLSX) and to the import itself is sent,
 * `GET /health` is asked every 100 ms; every answer must come within 1 s of the moment it was
 * due. The inputs beyond the bounds are refused with a 400 naming the bound: more than 1,000
 * columns (a 2 MB CSV line of 1,000,000 columns, an XLSX row of 16,384 cells or one cell in the
 * last column, an import of 1,000,000 fields), more than 1 MiB in one record (a CSV record, an XLSX
 * row holding one 60 MB cell, an import row); the largest inputs within them (21 MB of CSV, a
 * 90 MB import body) are answered, and a shared-strings bomb is refused once its text passes the
 * preview's bound.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForChild } from '../support/child-output.js';
import { collect, handmadeWorkbook } from '../support/handmade-xlsx.js';
import { startHealthProbe } from '../support/health-probe.js';
import { freePort } from '../support/redis-server.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The longest any `/health` answer may take, from the moment it was due. */
const HEALTH_BOUND_MS = 1_000;
const PROBE_EVERY_MS = 100;

let t: TestDatabase;
let child: ChildProcess | undefined;
let output = '';
let base = '';
let dataDir = '';

beforeAll(async () => {
  t = await testDatabase('full');
  t.platform.forget(t.name);
  await t.engine.closeDatabase(t.name);
  dataDir = await mkdtemp(join(tmpdir(), 'ff-import-stall-'));
  const port = await freePort();
  const { FF_DEV: _dev, FF_ADDONS_PATH: _addons, ...inherited } = process.env;
  child = spawn(join(ROOT, 'bin', 'fieldforge.js'), ['serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT,
    env: { ...inherited, DATABASE_URL: TEST_DATABASE_URL, FF_DATA_DIR: dataDir, FF_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await waitForChild(() => child, () => output, () => /serving on http:\/\//.test(output), 'the "serving" line');
  base = `http://127.0.0.1:${port}`;
  // The database opened (and its modules checked) before any measurement.
  expect((await fetch(`${base}/api/query/ProjectTask`, { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: '{}' })).status).toBe(200);
}, 240_000);
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, ...extra };
}

interface Answer {
  status: number;
  body: any;
  /** The slowest `/health` answer while the request ran, from when it was due (ms). */
  slowestHealth: number;
  probes: number;
  ms: number;
}

/**
 * Sends `request` while another process asks `/health` every 100 ms (each probe due at its slot
 * on the schedule, whether or not the previous one has answered): the test process's own pauses
 * (a 90 MB body in its heap) are not the server's.
 */
async function withHealthProbes(request: () => Promise<Response>): Promise<Answer> {
  const probe = await startHealthProbe(base, PROBE_EVERY_MS);
  const start = performance.now();
  const res = await request();
  const text = await res.text();
  const ms = performance.now() - start;
  const all = await probe.stop();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch { /* not JSON: kept as text */ }
  return { status: res.status, body, slowestHealth: Math.max(...all), probes: all.length, ms };
}

function previewOf(filename: string, content: Buffer | string): () => Promise<Response> {
  return () => {
    const form = new FormData();
    form.append('file', new Blob([content]), filename);
    return fetch(`${base}/api/import-preview/ProjectTask`, { method: 'POST', headers: headers(), body: form });
  };
}

function importOf(json: string): () => Promise<Response> {
  const body = Buffer.from(json); // encoded before the probes start: the client's work is not the server's
  return () => fetch(`${base}/api/import/ProjectTask`, { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body });
}

function report(label: string, a: Answer): void {
  console.log(`${label}: ${a.status} in ${Math.round(a.ms)} ms; slowest of ${a.probes} /health answers ${Math.round(a.slowestHealth)} ms`);
}

/** One row of `cells` cells in a sheet, cell k holding `value(k)`. */
function sheetRow(r: number, cells: number, value: (k: number) => string): string {
  let xml = `<row r="${r}">`;
  for (let k = 0; k < cells; k++) xml += `<c r="${columnName(k)}${r}" t="inlineStr"><is><t>${value(k)}</t></is></c>`;
  return `${xml}</row>`;
}

function columnName(index: number): string {
  let out = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) out = String.fromCharCode(65 + ((n - 1) % 26)) + out;
  return out;
}

function workbook(sheetRows: () => AsyncIterable<string>, strings: () => AsyncIterable<string> = async function* () {}, order: ('workbook' | 'styles' | 'strings' | 'sheet')[] = ['workbook', 'styles', 'sheet', 'strings']): Promise<Buffer> {
  return collect(handmadeWorkbook({ order, sheetRows, strings }));
}

describe('while the worst inputs are sent, /health answers within 1 s', () => {
  it('a CSV line of 1,000,000 columns is refused as soon as it passes 1,000 columns', async () => {
    const a = await withHealthProbes(previewOf('wide.csv', `${'a,'.repeat(999_999)}a\n`));
    report('CSV, 1,000,000 columns', a);
    expect(a.status).toBe(400);
    expect(a.body.detail).toMatch(/more than 1,000 columns/);
    expect(a.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);
  }, 120_000);

  it('a CSV record over 1 MiB is refused naming the bound; 21 records of 1,000 columns just under it are previewed', async () => {
    const long = await withHealthProbes(previewOf('long.csv', `Name\n${Array.from({ length: 500 }, () => 'x'.repeat(3_000)).join(',')}\n`));
    report('CSV, a 1.5 MB record', long);
    expect(long.status).toBe(400);
    expect(long.body.detail).toMatch(/1 MiB/);
    expect(long.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);

    const row = Array.from({ length: 1_000 }, (_, k) => `${k}`.padEnd(1_000, 'y')).join(',');
    const heavy = await withHealthProbes(previewOf('heavy.csv', Array.from({ length: 21 }, () => row).join('\n')));
    report('CSV, 21 records of 1,000 columns and 1 MB', heavy);
    expect(heavy.status, JSON.stringify(heavy.body).slice(0, 300)).toBe(200);
    expect(heavy.body.headers).toHaveLength(1_000);
    expect(heavy.body.rows).toHaveLength(20);
    expect(heavy.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);
  }, 180_000);

  it('an XLSX row of 16,384 cells, or one cell in the last column, is refused naming 1,000 columns', async () => {
    const wide = await withHealthProbes(previewOf('wide.xlsx', await workbook(async function* () { yield sheetRow(1, 16_384, (k) => `c${k}`); })));
    report('XLSX, a row of 16,384 cells', wide);
    expect(wide.status).toBe(400);
    expect(wide.body.detail).toMatch(/more than 1,000 columns/);
    expect(wide.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);

    const far = await withHealthProbes(previewOf('far.xlsx', await workbook(async function* () { yield '<row r="1"><c r="XFD1" t="inlineStr"><is><t>far</t></is></c></row>'; })));
    expect(far.status).toBe(400);
    expect(far.body.detail).toMatch(/more than 1,000 columns/);
  }, 120_000);

  it('an XLSX row holding one 60 MB cell is refused naming 1 MiB', async () => {
    const a = await withHealthProbes(previewOf('cell.xlsx', await workbook(async function* () {
      yield '<row r="1"><c r="A1" t="inlineStr"><is><t>';
      for (let i = 0; i < 60; i++) yield 'z'.repeat(1_000_000);
      yield '</t></is></c></row>';
    })));
    report('XLSX, a 60 MB cell', a);
    expect(a.status).toBe(400);
    expect(a.body.detail).toMatch(/1 MiB/);
    expect(a.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);
  }, 120_000);

  it('a shared-strings bomb (80 MB of strings before the sheet) is refused once it passes the preview\'s bound', async () => {
    const a = await withHealthProbes(previewOf('bomb.xlsx', await workbook(
      async function* () { yield '<row r="1"><c r="A1" t="s"><v>4999999</v></c></row>'; },
      async function* () { for (let i = 0; i < 5_000_000; i++) yield `<si><t>s${i}</t></si>`; },
      ['workbook', 'styles', 'strings', 'sheet'],
    )));
    report('XLSX, 5,000,000 shared strings before the sheet', a);
    expect(a.status).toBe(400);
    expect(a.body.detail).toMatch(/too much/);
    expect(a.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);
  }, 180_000);

  it('an import of 1,000,000 fields is refused naming 1,000 columns; a row over 1 MiB naming 1 MiB', async () => {
    const fields = ['name', ...Array.from({ length: 999_999 }, () => '')];
    const wide = await withHealthProbes(importOf(JSON.stringify({ fields, data: [fields], dry_run: true })));
    report('import, 1,000,000 fields', wide);
    expect(wide.status).toBe(400);
    expect(wide.body.detail).toMatch(/at most 1,000 columns/);
    expect(wide.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);

    const long = await withHealthProbes(importOf(JSON.stringify({ fields: ['name', ''], data: [['n', ''], ['Long', 'w'.repeat(1_100_000)]], dry_run: true })));
    expect(long.status).toBe(400);
    expect(long.body.detail).toMatch(/row 1 .*1 MiB/);
  }, 120_000);

  it('a 90 MB import body of rows just under the bounds is answered', async () => {
    const fields = ['name', ...Array.from({ length: 999 }, () => '')];
    const row = (i: number) => [`Stall ${i}`, ...Array.from({ length: 999 }, () => 'v'.repeat(1_000))];
    const body = JSON.stringify({ fields, data: [fields, ...Array.from({ length: 90 }, (_, i) => row(i))], dry_run: true });
    expect(body.length).toBeGreaterThan(90_000_000);
    const a = await withHealthProbes(importOf(body));
    report('import, 90 MB body', a);
    expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
    expect(a.body.summary).toMatchObject({ total_records: 90, would_create: 90, errors: 0 });
    expect(a.slowestHealth).toBeLessThan(HEALTH_BOUND_MS);
  }, 180_000);
});
