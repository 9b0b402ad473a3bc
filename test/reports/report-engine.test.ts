/**
 * The report engine and the actions a method returns (issue 11 items 4 and 7, CONTRACTS C1), on a
 * fixture module (`test/fixtures/reports/report_probe`) with HTML and PDF reports:
 * - without a usable Chromium a `pdf` report answers 503 ReportEngineUnavailable saying how to
 *   install one (and a method's writes before its report action are rolled back), while `html`
 *   reports work;
 * - `close`/`reload` set `X-Action-Close: 1` / `X-Action-Reload: 1` on JSON and document answers
 *   alike, and each header is absent otherwise;
 * - documents are named by the filename template (RFC 6266 `filename*` for non-ASCII names), ZIP
 *   entries are unique and UTF-8; values are escaped (`| raw` is the only way out); loop
 *   variables, `assign` and partial parameters reach the data they alias;
 * - one browser per platform, started on the first PDF, reused, and ended by `Platform.close`; a
 *   report page loads nothing from the network or the disk;
 * - bad requests are 400/404 with `{detail, error}`.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { pdfText, plain } from '../support/pdf-text.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { zipEntries } from '../support/zip-entries.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/reports', import.meta.url));

let t: TestDatabase;
const ids: Record<string, number> = {};
const savedChromium = process.env.FF_CHROMIUM;

beforeAll(async () => {
  t = await testDatabase('core', [FIXTURES]);
  await t.platform.install(t.name, { init: ['report_probe'] });
  ids.plain = await create({ name: 'Plain', note: 'A <em>note</em> & more', amount: 1234.5, when: '2026-03-09', lines: [{ label: 'first line', sequence: 1 }, { label: 'second line', sequence: 2 }] });
  ids.cafe = await create({ name: 'Café Zoë', amount: 1 });
  ids.twinA = await create({ name: 'Twin' });
  ids.twinB = await create({ name: 'twin' });
});
afterAll(async () => {
  restoreChromium();
  await t?.close();
});

function restoreChromium(): void {
  if (savedChromium === undefined) delete process.env.FF_CHROMIUM;
  else process.env.FF_CHROMIUM = savedChromium;
}

async function create(vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', '/api/create/ReportProbe', vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

const generate = (body: Record<string, unknown>, headers?: Record<string, string>) => t.api('POST', '/api/generate_report', body, headers);
const execute = (method: string, body: Record<string, unknown>) => t.api('POST', `/api/execute/ReportProbe/${method}`, body);

/** Chromium processes this test process started (Playwright runs the browser as a direct child). */
function chromiumChildren(): number {
  const out = execFileSync('ps', ['-o', 'comm=', '--ppid', String(process.pid)], { encoding: 'utf8' }).trim();
  return out ? out.split('\n').filter((c) => c.includes('chrom')).length : 0;
}

describe('without a usable Chromium (these run first: the platform has started no browser yet)', () => {
  it('a pdf report answers 503 ReportEngineUnavailable whose detail says how to install one', async () => {
    process.env.FF_CHROMIUM = '/nowhere/chromium';
    try {
      const res = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_pdf', instance_ids: [ids.plain] });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().error).toBe('ReportEngineUnavailable');
      expect(res.json().detail).toContain("FF_CHROMIUM is '/nowhere/chromium'");
      expect(res.json().detail).toContain('apt-get install chromium');
      expect(res.headers['retry-after']).toBeUndefined();
    } finally {
      restoreChromium();
    }
  });

  it('a browser that does not start is a 503 too', async () => {
    process.env.FF_CHROMIUM = '/bin/false';
    try {
      const res = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_pdf', instance_ids: [ids.plain] });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ error: 'ReportEngineUnavailable' });
      expect(res.json().detail).toContain('/bin/false did not start');
    } finally {
      restoreChromium();
    }
  });

  it('a method that writes and then returns a pdf report action is rolled back, nothing half done', async () => {
    process.env.FF_CHROMIUM = '/nowhere/chromium';
    try {
      const id = await create({ name: 'Untouched' });
      const res = await execute('action_rename_and_print', { ids: [id] });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().error).toBe('ReportEngineUnavailable');
      const after = await t.api('POST', `/api/fetch/ReportProbe/${id}`, { fields: ['name'] });
      expect(after.json().name).toBe('Untouched');
    } finally {
      restoreChromium();
    }
  });

  it('html reports work all the same', async () => {
    process.env.FF_CHROMIUM = '/nowhere/chromium';
    try {
      const res = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_html', instance_ids: [ids.plain] });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('<h1 id="name">Plain</h1>');
    } finally {
      restoreChromium();
    }
    expect(t.platform.pdf.launches).toBe(1); // only the /bin/false attempt
    expect(chromiumChildren()).toBe(0);
  });
});

describe('actions a method returns', () => {
  it('close and reload set X-Action-Close: 1 / X-Action-Reload: 1 on JSON answers, each only when asked', async () => {
    const close = await execute('action_close', { ids: [ids.plain] });
    expect(close.statusCode, close.body).toBe(200);
    expect(close.headers['content-type']).toMatch(/^application\/json/);
    expect(close.json()).toMatchObject({ result: { done: true, close: true } });
    expect(close.headers['x-action-close']).toBe('1');
    expect(close.headers['x-action-reload']).toBeUndefined();

    const reload = await execute('action_reload', { ids: [ids.plain] });
    expect(reload.headers['x-action-reload']).toBe('1');
    expect(reload.headers['x-action-close']).toBeUndefined();

    const plainAnswer = await execute('action_plain', { ids: [ids.plain] });
    expect(plainAnswer.statusCode).toBe(200);
    expect(plainAnswer.headers['x-action-close']).toBeUndefined();
    expect(plainAnswer.headers['x-action-reload']).toBeUndefined();
  });

  it('a report action answers the document itself, with the action headers when asked', async () => {
    const res = await execute('action_print_closing', { ids: [ids.plain] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Probe Plain.html"');
    expect(res.headers['x-action-close']).toBe('1');
    expect(res.headers['x-action-reload']).toBe('1');
    expect(res.body).toContain('<h1 id="name">Plain</h1>');

    const bare = await execute('action_print_html', { ids: [ids.plain] });
    expect(bare.statusCode).toBe(200);
    expect(bare.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(bare.headers['x-action-close']).toBeUndefined();
    expect(bare.headers['x-action-reload']).toBeUndefined();
  });

  it('run on several records, their report actions answer one ZIP of the union of their records', async () => {
    const res = await execute('action_print_closing', { ids: [ids.twinA, ids.plain] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['x-action-close']).toBe('1');
    expect((await zipEntries(res.rawPayload)).map((e) => e.name)).toEqual(['Probe Twin.html', 'Probe Plain.html']);
  });

  it('a pdf report action answers the PDF, binary answers carrying the headers too', async () => {
    const res = await execute('action_print_pdf', { ids: [ids.plain] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['x-action-reload']).toBe('1');
    expect(res.headers['x-action-close']).toBeUndefined();
    expect(plain(await pdfText(res.rawPayload))).toContain('Plain');
  });
});

describe('documents', () => {
  it('escape every value; `| raw` is the only way out; formats, company, user, loop aliases and partials reach their data', async () => {
    const id = await create({ name: '<script>alert(1)</script>', note: '<em>kept</em>', lines: [{ label: '<b>line</b>' }] });
    const res = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_html', instance_ids: [id] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('<h1 id="name">&lt;script&gt;alert(1)&lt;/script&gt;</h1>');
    expect(res.body).not.toContain('<script>alert(1)');
    expect(res.body).toContain('<p id="note">&lt;em&gt;kept&lt;/em&gt;</p>');
    expect(res.body).toContain('<div id="raw"><em>kept</em></div>');
    expect(res.body).toContain('<li class="line">&lt;b&gt;line&lt;/b&gt;</li>');
    // Opened from the API's origin, an HTML document runs nothing and loads nothing.
    expect(res.headers['content-security-policy']).toMatch(/^sandbox; default-src 'none'/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');

    const full = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_html', instance_ids: [ids.plain] });
    expect(full.body).toContain('<p id="amount">1,234.50</p>');
    expect(full.body).toContain('<p id="when">03/09/2026</p>');
    expect(full.body).toContain('<p id="year">2026</p>');
    expect(full.body).toMatch(/<p id="company">[^<]+<\/p>/);
    expect(full.body).toContain('<p id="user">test admin</p>');
    // `assign rows = record.lines`, `for line in rows`, `render … item: line` → record.lines.label.
    expect(full.body).toMatch(/<li class="line">first line<\/li>\s*<li class="line">second line<\/li>/);
    expect(full.body).toContain('<html lang="en" dir="ltr">');
  });

  it('name a non-ASCII document with RFC 6266 filename* beside an ASCII fallback', async () => {
    const res = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_html', instance_ids: [ids.cafe] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Probe Cafe Zoe.html"; filename*=UTF-8''Probe%20Caf%C3%A9%20Zo%C3%AB.html`);
  });

  it('put several records in a ZIP whose names are unique (ignoring case) and UTF-8', async () => {
    const res = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_html', instance_ids: [ids.twinA, ids.twinB, ids.cafe] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Probe sheet.zip"');
    const entries = await zipEntries(res.rawPayload);
    expect(entries.map((e) => e.name)).toEqual(['Probe Twin.html', 'Probe twin (2).html', 'Probe Café Zoë.html']);
    expect(entries.every((e) => e.utf8)).toBe(true);
    expect(entries[1]!.body.toString('utf8')).toContain('<h1 id="name">twin</h1>');
  });
});

describe('the browser', () => {
  let server: Server;
  const requests: string[] = [];
  let connections = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.end('x');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is started once, on the first PDF, and reused for every document after', async () => {
    const before = t.platform.pdf.launches;
    const many = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_pdf', instance_ids: [ids.plain, ids.cafe, ids.twinA, ids.twinB] });
    expect(many.statusCode, many.body).toBe(200);
    const entries = await zipEntries(many.rawPayload);
    expect(entries.map((e) => e.name)).toEqual(['Probe Plain.pdf', 'Probe Café Zoë.pdf', 'Probe Twin.pdf', 'Probe twin (2).pdf']);
    expect(plain(await pdfText(entries[1]!.body))).toContain('Café Zoë');
    const again = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_pdf', instance_ids: [ids.plain] });
    expect(again.statusCode).toBe(200);
    expect(t.platform.pdf.launches - before).toBeLessThanOrEqual(1);
    expect(chromiumChildren()).toBe(1);
  });

  it('a report page requests nothing: no other host, no local file', async () => {
    const { port } = server.address() as AddressInfo;
    const id = await create({ name: 'Fetching page', note: `http://127.0.0.1:${port}` });
    const res = await generate({ model: 'ReportProbe', report_id: 'report_probe.report_network', instance_ids: [id] });
    expect(res.statusCode, res.body).toBe(200);
    const text = plain(await pdfText(res.rawPayload));
    expect(text).toContain('Fetching page');
    expect(text).not.toContain(execFileSync('hostname', { encoding: 'utf8' }).trim());
    expect(requests).toEqual([]);
    // Not even a connection (a speculative preconnect would tell the host the document is being made).
    expect(connections).toBe(0);
  });

  it('ends with its platform: Platform.close stops the browser', async () => {
    // A second platform (its own engine and app) on the same database: one more browser while it
    // prints, none once it is closed.
    const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
    const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR, FIXTURES]));
    const app = await buildApp(platform);
    const before = chromiumChildren();
    try {
      const res = await app.inject({
        method: 'POST', url: '/api/generate_report',
        headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
        payload: JSON.stringify({ model: 'ReportProbe', report_id: 'report_probe.report_pdf', instance_ids: [ids.plain] }),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(chromiumChildren()).toBe(before + 1);
    } finally {
      await app.close();
      await platform.close();
    }
    expect(chromiumChildren()).toBe(before);
  });
});

describe('bad requests', () => {
  const base = { model: 'ReportProbe', report_id: 'report_probe.report_html' };
  /** A body naming the record `Plain` (its id is known only once the records exist). */
  const plainIds = () => [ids.plain!];
  it.each<[string, number, string, () => Record<string, unknown>]>([
    ['no report_id', 400, "'report_id' is required", () => ({ model: 'ReportProbe', instance_ids: plainIds() })],
    ['no model', 400, "'model' is required", () => ({ report_id: 'report_probe.report_html', instance_ids: plainIds() })],
    ['no records', 400, "'instance_ids' or 'selection'", () => base],
    ['both ids and a selection', 400, 'not both', () => ({ ...base, instance_ids: plainIds(), selection: { filter_str: '' } })],
    ['an empty list of ids', 400, 'names no records', () => ({ ...base, instance_ids: [] })],
    ['a selection naming nothing', 400, 'names no records', () => ({ ...base, selection: {} })],
    ['ids that are not ids', 400, 'record ids', () => ({ ...base, instance_ids: ['1'] })],
    ['another model than the report\'s', 400, 'prints ReportProbe records, not Company', () => ({ ...base, model: 'Company', instance_ids: plainIds() })],
    ['an unknown report', 404, "Report 'report_probe.nothing' does not exist", () => ({ ...base, report_id: 'report_probe.nothing', instance_ids: plainIds() })],
    ['a selection matching nothing', 404, 'nothing to print', () => ({ ...base, selection: { filter_str: "Q(name='no such probe')" } })],
    ['a template file that does not exist', 400, "template 'reports/missing.html' does not exist", () => ({ ...base, report_id: 'report_probe.report_outside', instance_ids: plainIds() })],
  ])('%s → %i', async (_name, status, detail, body) => {
    const res = await generate(body());
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().detail).toContain(detail);
    expect(typeof res.json().error).toBe('string');
  });

  it('a record that does not exist is a 404 for the whole call', async () => {
    const res = await generate({ ...base, instance_ids: [ids.plain, 987654] });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toMatchObject({ error: 'NotFound' });
  });

  it('a Report whose template climbs out of its module is refused when it is written', async () => {
    const res = await t.api('POST', '/api/create/Report', { name: 'Escape', model: 'ReportProbe', template: '../../etc/passwd' });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'ValidationError' });
  });
});
