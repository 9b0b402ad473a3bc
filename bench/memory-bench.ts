/**
 * `BENCH_ONLY=memory npm run bench`: whether the memory of the big jobs comes back (issue 25,
 * item 5). The real `fieldforge serve` (its shebang's flags, as people run it) runs the jobs back
 * to back — a 50,000-row import, a mixed load of bulk updates, imports and exports, a set of
 * hostile previews (a CSV line of a million columns, XLSX zip bombs), a 50,000-row export — and
 * the resident set is printed before each, at its peak, right after, and `BENCH_SETTLE` seconds
 * later. The baseline is the server's own idle figure, measured in the same run after one small
 * job of every kind (so code loaded on first use, such as exceljs, counts as idle); the target is
 * to be back within 50 MiB of it. Not a test: it prints and never fails CI.
 *
 * BENCH_ROWS (50,000), BENCH_MIXED_SECONDS (20), BENCH_MIXED_CLIENTS (20), BENCH_SETTLE (30).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { freePort } from '../test/support/redis-server.js';
import { BENCH_BASE_URL, createBenchDatabase } from './bench-database.js';
import { memoryOf, resetPeakMemory } from './server-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROWS = Number(process.env.BENCH_ROWS ?? 50_000);
const MIXED_SECONDS = Number(process.env.BENCH_MIXED_SECONDS ?? 20);
const MIXED_CLIENTS = Number(process.env.BENCH_MIXED_CLIENTS ?? 20);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE ?? 30);
const TARGET_MIB = 50;

const log = (msg: string) => console.error(`[memory] ${msg}`);
const mib = (kib: number) => (kib / 1024).toFixed(0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Job {
  name: string;
  run(api: Api): Promise<string>;
}

class Api {
  constructor(readonly url: string, readonly headers: Record<string, string>) {}

  async json(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${this.url}${path}`, { method, headers: this.headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }

  /** Sends the request and reads the answer to its end (an export); answers its size in bytes. */
  async drain(method: string, path: string, body: unknown): Promise<number> {
    const res = await fetch(`${this.url}${path}`, { method, headers: this.headers, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    let bytes = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
    return bytes;
  }

  /** An import-preview upload; answers the status (hostile files are refused with a 400). */
  async preview(filename: string, content: Buffer): Promise<number> {
    const form = new FormData();
    form.append('file', new Blob([content]), filename);
    const { 'content-type': _json, ...headers } = this.headers;
    const res = await fetch(`${this.url}/api/import-preview/Contact`, { method: 'POST', headers, body: form });
    await res.arrayBuffer();
    return res.status;
  }
}

function contactRows(count: number, offset = 0): string[][] {
  const rows = [['Name', 'Email', 'City', 'Phone', 'Job title']];
  for (let i = offset; i < offset + count; i++) rows.push([`Person ${i}`, `person${i}@example.test`, `City ${i % 97}`, `+1 555 ${String(i).padStart(7, '0')}`, 'Buyer']);
  return rows;
}

const importBody = (count: number, offset = 0) => ({
  fields: ['name', 'email', 'city', 'phone', 'job_title'], data: contactRows(count, offset), match_fields: ['email'],
});

const exportBody = (limitFilter: string) => ({ filter_str: limitFilter, fields: ['name', 'email', 'city', 'phone', 'job_title'] });

// ------------------------------------------------------------------------------------------------
// Hostile uploads
// ------------------------------------------------------------------------------------------------

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';

/** An XLSX whose `part` XML is `repeat` copies of `unit` (deflated to almost nothing). */
async function bombWorkbook(bomb: 'sheet' | 'strings', repeat: number): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(`<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
    + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    + '</Relationships>'), 'xl/_rels/workbook.xml.rels');
  zip.addBuffer(Buffer.from(`<?xml version="1.0"?><workbook ${NS} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">`
    + '<sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'), 'xl/workbook.xml');
  const repeated = (head: string, unit: string, tail: string) => Readable.from((function* () {
    yield Buffer.from(head);
    const block = Buffer.from(unit.repeat(1000));
    for (let i = 0; i < repeat / 1000; i++) yield block;
    yield Buffer.from(tail);
  })());
  if (bomb === 'strings') {
    // Before the sheet, as LibreOffice writes it: the table is met first.
    zip.addReadStream(repeated(`<?xml version="1.0"?><sst ${NS}>`, `<si><t>${'x'.repeat(200)}</t></si>`, '</sst>'), 'xl/sharedStrings.xml');
    zip.addBuffer(Buffer.from(`<?xml version="1.0"?><worksheet ${NS}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>`), 'xl/worksheets/sheet1.xml');
  } else {
    // One row of as many cells as the bytes allow.
    zip.addReadStream(repeated(`<?xml version="1.0"?><worksheet ${NS}><sheetData><row r="1">`, '<c t="inlineStr"><is><t>Name</t></is></c>', '</row></sheetData></worksheet>'), 'xl/worksheets/sheet1.xml');
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

// ------------------------------------------------------------------------------------------------
// The jobs
// ------------------------------------------------------------------------------------------------

const JOBS: Job[] = [
  {
    name: `import of ${ROWS.toLocaleString('en')} rows`,
    async run(api) {
      const answer = await api.json('POST', '/api/import/Contact', importBody(ROWS));
      return `${answer.summary.created} created, ${answer.summary.updated} updated`;
    },
  },
  {
    name: `mixed load, ${MIXED_CLIENTS} clients × ${MIXED_SECONDS} s`,
    async run(api) {
      const until = Date.now() + MIXED_SECONDS * 1000;
      const done = { update: 0, import: 0, export: 0 };
      const failed: string[] = [];
      const attempt = async (kind: keyof typeof done, call: () => Promise<unknown>) => {
        try {
          await call();
          done[kind]++;
        } catch (err) {
          failed.push(`${kind}: ${(err as Error).message.slice(0, 120)}`);
        }
      };
      await Promise.all(Array.from({ length: MIXED_CLIENTS }, async (_, client) => {
        for (let i = 0; Date.now() < until; i++) {
          const pick = (client * 7 + i * 13) % 20; // 12 of 20 updates, 5 imports, 3 exports
          if (pick < 12) {
            await attempt('update', () => api.json('PUT', '/api/bulk-update/Contact', { selection: { filter_str: `Q(city="City ${(client + i) % 97}")` }, vals: { job_title: `Buyer ${i}` } }));
          } else if (pick < 17) {
            await attempt('import', () => api.json('POST', '/api/import/Contact', importBody(1000, ((client * 31 + i * 1000) % Math.max(1, ROWS - 1000)))));
          } else {
            await attempt('export', () => api.drain('POST', '/api/export/Contact', exportBody(`Q(id__lte=${10_000 + ((client + i) % 5) * 1000})`)));
          }
        }
      }));
      if (failed.length) log(`mixed load: ${failed.length} failed, e.g. ${failed[0]}`);
      return `${done.update} bulk updates, ${done.import} imports of 1,000 rows, ${done.export} exports of ~10,000 rows, ${failed.length} failed`;
    },
  },
  {
    name: 'hostile previews',
    async run(api) {
      const wide = Buffer.from(`${Array.from({ length: 1_000_000 }, (_, i) => `c${i % 10}`).join(',')}\n`);
      const statuses = [
        await api.preview('wide.csv', wide),
        await api.preview('cells.xlsx', await bombWorkbook('sheet', 2_000_000)),
        await api.preview('strings.xlsx', await bombWorkbook('strings', 1_000_000)),
      ];
      return `answers ${statuses.join(', ')} (a CSV line of 1,000,000 columns; a row of 2,000,000 cells; 1,000,000 shared strings of 200 characters)`;
    },
  },
  {
    name: `export of ${ROWS.toLocaleString('en')} rows`,
    async run(api) {
      const bytes = await api.drain('POST', '/api/export/Contact', exportBody(''));
      return `${(bytes / 1024 / 1024).toFixed(1)} MiB of XLSX`;
    },
  },
];

// ------------------------------------------------------------------------------------------------

async function startServe(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  spawnSync(process.execPath, ['bin/build.js'], { cwd: ROOT, stdio: 'inherit' });
  const port = await freePort();
  const child = spawn(join(ROOT, 'bin', 'fieldforge.js'), ['serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT, env: { ...process.env, NODE_ENV: 'production', ...env }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(`[serve] ${d}`));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return { child, url };
    if (Date.now() > until) throw new Error('serve did not listen within 60 s');
    await sleep(100);
  }
}

async function main(): Promise<void> {
  const dbName = `ffbench_memory_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BENCH_BASE_URL });
  const dataDir = await mkdtemp(join(tmpdir(), 'ff-memory-bench-'));
  let child: ChildProcess | undefined;
  try {
    log(`creating ${dbName} (contacts)…`);
    const key = await createBenchDatabase(engine, dbName, ['contacts'], 'memory benchmark');
    const served = await startServe({ DATABASE_URL: BENCH_BASE_URL, FF_DATA_DIR: dataDir, FF_LOG_LEVEL: 'warn', FF_SECRET: randomBytes(32).toString('base64url') });
    child = served.child;
    const api = new Api(served.url, { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' });
    const pid = child.pid!;

    log('warming up: one small job of every kind…');
    await api.json('POST', '/api/import/Contact', importBody(20, 10_000_000));
    await api.json('PUT', '/api/bulk-update/Contact', { selection: { filter_str: 'Q(city="City 1")' }, vals: { job_title: 'Warm' } });
    await api.drain('POST', '/api/export/Contact', exportBody(''));
    await api.preview('small.csv', Buffer.from('Name,Email\nAda,ada@example.test\n'));
    await api.preview('small.xlsx', await bombWorkbook('sheet', 1000));
    await sleep(SETTLE_SECONDS * 1000);
    const idle = memoryOf(pid).rss;
    log(`idle: ${mib(idle)} MiB`);

    const results: string[][] = [];
    for (const job of JOBS) {
      const before = memoryOf(pid).rss;
      const peakKnown = resetPeakMemory(pid);
      const started = performance.now();
      const what = await job.run(api);
      const seconds = (performance.now() - started) / 1000;
      const { rss: after, hwm } = memoryOf(pid);
      log(`${job.name}: ${what}; ${seconds.toFixed(1)} s; ${mib(after)} MiB after; settling ${SETTLE_SECONDS} s…`);
      await sleep(SETTLE_SECONDS * 1000);
      const later = memoryOf(pid).rss;
      const over = (later - idle) / 1024;
      results.push([job.name, seconds.toFixed(1), mib(before), peakKnown ? mib(hwm) : '—', mib(after), mib(later),
        `${over >= 0 ? '+' : ''}${over.toFixed(0)}`, over <= TARGET_MIB ? 'met' : 'MISSED', what]);
    }

    const header = ['job', 's', 'before', 'peak', 'after', `after ${SETTLE_SECONDS} s`, 'vs idle', `≤ +${TARGET_MIB}`, 'what it did'];
    const widths = header.map((h, i) => Math.max(h.length, ...results.map((r) => r[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
    console.log([
      '',
      `Memory of the real serve (resident set, MiB) across the big jobs, back to back; idle ${mib(idle)} MiB (the baseline, same run).`,
      `Load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}.`,
      '',
      line(header),
      widths.map((w) => '-'.repeat(w)).join('  '),
      ...results.map(line),
    ].join('\n'));
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child!.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await engine.drop(dbName).catch((err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await engine.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
