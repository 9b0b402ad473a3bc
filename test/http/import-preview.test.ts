/**
 * Import preview (CONTRACTS C3): `POST /api/import-preview/{model}`, a multipart upload of an XLSX
 * or CSV file, answers `{headers, rows, suggested_fields}` — the header row, the first 20 data rows
 * and the import path each header suggests (by name, by label in the caller's language, or as a
 * `/` path). The file is read as a stream and parsed no further than the preview needs: a
 * 200,000-row CSV or XLSX answers in seconds, without holding the file, and rows far down that
 * would not even parse do not matter. Refusals are 400 (no file, unknown format, damaged file,
 * too large), 404 (unknown model) and 403 (no read right).
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Language, Translation } from '../../modules/core/models/language.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { DatabaseSelector } from '../../src/http/database-selection.js';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { apiContextHook } from '../../src/http/request-context.js';
import { registerImportPreviewRoutes } from '../../src/http/routes/import-preview.js';
import { collect, escapeXml, handmadeWorkbook } from '../support/handmade-xlsx.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const FIXTURES = new URL('../fixtures/import/', import.meta.url);
let t: TestDatabase;
let noProjectKey: string;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    ({ key: noProjectKey } = await createServiceAccountKey({ name: 'no project', groups: ['core.group_user'] }));
  });
});
afterAll(async () => { await t?.close(); });

// ------------------------------------------------------------------------------------------------
// Building uploads
// ------------------------------------------------------------------------------------------------

type Part = { name: string; value: string } | { name: string; filename: string; content: Buffer | string | AsyncIterable<Buffer> };

/** A multipart/form-data body streamed part by part (file contents as they are generated). */
function multipart(parts: readonly Part[]): { payload: Readable; contentType: string } {
  const boundary = `----ffpreview${Math.random().toString(16).slice(2)}`;
  async function* body(): AsyncGenerator<Buffer> {
    for (const part of parts) {
      if ('value' in part) {
        yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`);
        continue;
      }
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n`
        + 'Content-Type: application/octet-stream\r\n\r\n');
      if (typeof part.content === 'string' || Buffer.isBuffer(part.content)) yield Buffer.from(part.content);
      else for await (const chunk of part.content) yield chunk;
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  return { payload: Readable.from(body()), contentType: `multipart/form-data; boundary=${boundary}` };
}

function upload(model: string, parts: readonly Part[], headers: Record<string, string> = {}, app: FastifyInstance = t.app) {
  const { payload, contentType } = multipart(parts);
  return app.inject({
    method: 'POST', url: `/api/import-preview/${model}`, payload,
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': contentType, ...headers },
  });
}

async function preview(model: string, parts: readonly Part[], headers: Record<string, string> = {}) {
  const res = await upload(model, parts, headers);
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['headers', 'rows', 'suggested_fields']);
  expect(body.suggested_fields).toHaveLength(body.headers.length);
  return body as { headers: string[]; rows: unknown[][]; suggested_fields: (string | null)[] };
}

async function refused(status: number, model: string, parts: readonly Part[], headers: Record<string, string> = {}): Promise<string> {
  const res = await upload(model, parts, headers);
  expect(res.statusCode, res.body.slice(0, 500)).toBe(status);
  expect(Object.keys(res.json())).toEqual(expect.arrayContaining(['detail', 'error']));
  return res.json().detail;
}

/** An XLSX written by exceljs's streaming writer (sheets before the shared strings, as Excel does). */
async function streamedWorkbook(fill: (sheet: ExcelJS.Worksheet) => void, extraSheet = true): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new (await import('node:stream')).PassThrough();
  sink.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => sink.on('end', resolve));
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: true, useStyles: true });
  const sheet = book.addWorksheet('Tasks');
  fill(sheet as unknown as ExcelJS.Worksheet);
  sheet.commit();
  if (extraSheet) {
    const other = book.addWorksheet('Other');
    other.addRow(['Not', 'this', 'sheet']).commit();
    other.commit();
  }
  await book.commit();
  await done;
  return Buffer.concat(chunks);
}

/** Peak growth of this process's heap and buffers while `fn` runs, sampled every 5 ms. */
async function peakGrowth<T>(fn: () => Promise<T>): Promise<{ value: T; mib: number; ms: number }> {
  const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
  const base = used();
  let peak = base;
  const timer = setInterval(() => { peak = Math.max(peak, used()); }, 5);
  const start = Date.now();
  try {
    const value = await fn();
    return { value, mib: (Math.max(peak, used()) - base) / 2 ** 20, ms: Date.now() - start };
  } finally {
    clearInterval(timer);
  }
}

// ------------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------------

describe('CSV previews', () => {
  it('a `;` CSV with a BOM: headers, the first 20 rows, suggestions by name, label and path', async () => {
    const header = ['Name', 'Deadline', 'Parent task', 'project / Name', 'Tags/ID', 'subtasks/name', 'identifier', 'ID', 'assignee/identifier', 'Nonsense', 'NAME', ''];
    const lines = Array.from({ length: 30 }, (_, i) => [`"Task; ${i}"`, `2024-01-${String(1 + i).padStart(2, '0')}`, '', 'Proj', '1', '', `x_${i}`, '', '', 'n', '', ''].join(';'));
    const body = await preview('ProjectTask', [{ name: 'file', filename: 'tasks.csv', content: `\uFEFF${header.join(';')}\r\n${lines.join('\r\n')}\r\n` }]);
    expect(body.headers).toEqual(header.slice(0, 11));
    expect(body.suggested_fields).toEqual(['name', 'deadline', 'parent', 'project/name', 'tags/ID', 'subtasks/name', 'identifier', 'id', 'assignee/identifier', null, null]);
    expect(body.rows).toHaveLength(20);
    expect(body.rows[0]).toEqual(['Task; 0', '2024-01-01', null, 'Proj', '1', null, 'x_0', null, null, 'n', null]);
    expect(body.rows[19]![0]).toBe('Task; 19');
  });

  it('has_header false (sent after the file): the first line is data, columns are lettered, nothing suggested', async () => {
    const csv = 'name,"a, b","multi\nline"\n1,2,3\n';
    const body = await preview('ProjectTask', [{ name: 'file', filename: 'plain.csv', content: csv }, { name: 'has_header', value: 'false' }]);
    expect(body.headers).toEqual(['A', 'B', 'C']);
    expect(body.rows).toEqual([['name', 'a, b', 'multi\nline'], ['1', '2', '3']]);
    expect(body.suggested_fields).toEqual([null, null, null]);
  });

  it('a file from the fixtures: Windows-1252 text and `;` with decimal commas', async () => {
    const body = await preview('ProjectTask', [{ name: 'file', filename: 'articles.csv', content: readFileSync(new URL('articles-windows-1252.csv', FIXTURES)) }]);
    expect(body.headers).toEqual(['Désignation', 'Qté', 'Prix']);
    expect(body.rows).toEqual([['Café crème', '2', '3,50'], ['Thé', '1', '2,00']]);
    const bom = await preview('ProjectTask', [{ name: 'has_header', value: 'true' }, { name: 'file', filename: 'tasks.csv', content: readFileSync(new URL('tasks-semicolon-bom.csv', FIXTURES)) }]);
    expect(bom.headers).toEqual(['Name', 'Deadline', 'Priority']);
    expect(bom.suggested_fields).toEqual(['name', 'deadline', 'priority']);
    expect(bom.rows).toEqual([['Write; the report', '2024-03-01', '1']]);
  });

  it('labels match in the caller\'s language', async () => {
    // German has no translation file here: its labels are rows of their own, so this test does not
    // depend on what the modules' files hold.
    await t.run(() => Translation.create_many([
      { lang: 'de', key: 'field:Language.name', value: 'Bezeichnung', module: 'core' },
      { lang: 'de', key: 'field:Language.direction', value: 'Schreibrichtung', module: 'core' },
      { lang: 'de', key: 'field:ProjectTask.deadline', value: 'Frist', module: 'project' },
      { lang: 'de', key: 'field:ProjectProject.name', value: 'Projektname', module: 'project' },
    ]));
    const de = await t.run(async () => (await Language.query({ code: 'de' }).with_archived().first())!.id);
    const activated = await t.api('PUT', `/api/update/Language/${de}`, { active: true });
    expect(activated.statusCode, activated.body).toBe(200);
    const file = { name: 'file', filename: 'sprachen.csv', content: 'Bezeichnung;SCHREIB RICHTUNG;CODE;Date format\nDeutsch;ltr;de;%d.%m.%Y\n' };
    const body = await preview('Language', [file], { 'accept-language': 'de-CH, de;q=0.9' });
    // Translated labels, names, and the source labels as a fallback.
    expect(body.suggested_fields).toEqual(['name', 'direction', 'code', 'date_format']);
    // In English the German labels name nothing.
    expect((await preview('Language', [file], { 'accept-language': 'en' })).suggested_fields).toEqual([null, null, 'code', 'date_format']);
    // Paths through relations use the related model's labels.
    const tasks = await preview('ProjectTask', [{ name: 'file', filename: 'aufgaben.csv', content: 'Frist,Project/Projektname\n2024-01-01,X\n' }], { 'accept-language': 'de' });
    expect(tasks.suggested_fields).toEqual(['deadline', 'project/name']);
  });
});

describe('XLSX previews', () => {
  it('a workbook from a streaming writer: the first sheet; numbers, ISO dates, booleans, formula results, blank rows skipped', async () => {
    const xlsx = await streamedWorkbook((sheet) => {
      sheet.addRow(['Name', 'Planned hours', 'Deadline', 'Active', 'Twice']).commit();
      for (let i = 0; i < 25; i++) {
        if (i === 3) sheet.addRow([]).commit();
        const row = sheet.addRow([`Task ${i}`, i + 0.5, new Date(Date.UTC(2024, 1, 1 + i)), i % 2 === 0, { formula: `B${i + 2}*2`, result: 2 * i + 1 }]);
        row.getCell(3).numFmt = 'dd/mm/yyyy';
        row.commit();
      }
      const timed = sheet.addRow(['With time', 1, new Date(Date.UTC(2024, 5, 6, 12, 30, 15))]);
      timed.getCell(3).numFmt = 'yyyy-mm-dd hh:mm:ss';
      timed.commit();
    });
    const body = await preview('ProjectTask', [{ name: 'file', filename: 'tasks.xlsx', content: xlsx }]);
    expect(body.headers).toEqual(['Name', 'Planned hours', 'Deadline', 'Active', 'Twice']);
    expect(body.suggested_fields).toEqual(['name', 'planned_hours', 'deadline', 'active', null]);
    expect(body.rows).toHaveLength(20);
    expect(body.rows[0]).toEqual(['Task 0', 0.5, '2024-02-01', true, 1]);
    expect(body.rows[3]).toEqual(['Task 3', 3.5, '2024-02-04', false, 7]);
    expect(body.rows[19]![0]).toBe('Task 19');
  });

  it('a workbook holding its shared strings before the sheet, 1904 dates, and no extension on the name', async () => {
    const words = ['Name', 'Deadline', 'Première tâche', 'Deuxième'];
    const file = handmadeWorkbook({
      order: ['workbook', 'styles', 'strings', 'sheet'], date1904: true,
      strings: async function* () { for (const w of words) yield `<si><t>${escapeXml(w)}</t></si>`; },
      sheetRows: async function* () {
        yield '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>';
        // 1904 system: serial 0 is 1904-01-01.
        yield '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" s="1"><v>0</v></c></row>';
        yield '<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3" t="b"><v>1</v></c><c r="C3" t="inlineStr"><is><t>inline</t></is></c></row>';
      },
    });
    const body = await preview('ProjectTask', [{ name: 'file', filename: 'export', content: await collect(file) }]);
    expect(body.headers).toEqual(['Name', 'Deadline', '']);
    expect(body.suggested_fields).toEqual(['name', 'deadline', null]);
    expect(body.rows).toEqual([['Première tâche', '1904-01-01', null], ['Deuxième', true, 'inline']]);
  });
});

describe('large files are read as a stream', () => {
  it('a 200,000-row CSV answers in seconds without holding the file; rows past the preview are never parsed', async () => {
    const rows = 200_000;
    let sent = 0;
    async function* csv(): AsyncGenerator<Buffer> {
      yield Buffer.from('Name,Description,Planned hours\n');
      for (let i = 0; i < rows; i += 1000) {
        let batch = '';
        for (let j = i; j < i + 1000; j++) {
          // Row 30 opens a quote that is never closed: parsed, the rest of the file would be one
          // record, refused beyond 1 MiB.
          batch += j === 30 ? `"unclosed ${j},${'x'.repeat(150)},1\n` : `Task ${j},${'lorem ipsum '.repeat(12)},${j % 40}\n`;
        }
        sent += batch.length;
        yield Buffer.from(batch);
      }
    }
    const { value: res, mib, ms } = await peakGrowth(() => upload('ProjectTask', [{ name: 'file', filename: 'big.csv', content: csv() }]));
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const body = res.json();
    expect(body.rows).toHaveLength(20);
    expect(body.rows[19]).toEqual(['Task 19', 'lorem ipsum '.repeat(12), '19']);
    expect(sent).toBeGreaterThan(30 * 2 ** 20);
    console.log(`200,000-row CSV (${(sent / 2 ** 20).toFixed(1)} MiB): ${ms} ms, peak heap+buffers growth ${mib.toFixed(1)} MiB`);
    expect(ms).toBeLessThan(20_000);
    // Holding the file would take its size again (twice as UTF-16 text).
    expect(mib).toBeLessThan(sent / 2 ** 20);
  });

  it('a 200,000-row XLSX (shared strings after the sheet) answers in seconds; rows past the preview are never parsed', async () => {
    const rows = 200_000;
    const file = handmadeWorkbook({
      order: ['sheet', 'strings', 'styles', 'workbook'],
      strings: async function* () {
        yield '<si><t>Name</t></si><si><t>Deadline</t></si><si><t>Hours</t></si>';
        for (let i = 0; i < rows; i++) yield `<si><t>Task ${i}</t></si>`;
      },
      sheetRows: async function* () {
        yield '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>';
        for (let i = 0; i < rows; i++) {
          const r = i + 2;
          // Far past the preview, a row that is not even XML: parsed, the file would be refused.
          if (i === 50_000) yield `<row r="${r}"><c r="A${r}" t="s"><v>oops</c></row></row><<`;
          else yield `<row r="${r}"><c r="A${r}" t="s"><v>${i + 3}</v></c><c r="B${r}" s="1"><v>${45_000 + (i % 365)}</v></c><c r="C${r}"><v>${i % 40}</v></c></row>`;
        }
      },
    });
    let sent = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const chunk of file) {
        sent += chunk.length;
        yield chunk;
      }
    }
    const { value: res, mib, ms } = await peakGrowth(() => upload('ProjectTask', [{ name: 'file', filename: 'big.xlsx', content: counted() }]));
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const body = res.json();
    expect(body.headers).toEqual(['Name', 'Deadline', 'Hours']);
    expect(body.suggested_fields).toEqual(['name', 'deadline', null]);
    expect(body.rows).toHaveLength(20);
    expect(body.rows[0]).toEqual(['Task 0', '2023-03-15', 0]);
    expect(body.rows[19]).toEqual(['Task 19', '2023-04-03', 19]);
    console.log(`200,000-row XLSX (${(sent / 2 ** 20).toFixed(1)} MiB compressed): ${ms} ms, peak heap+buffers growth ${mib.toFixed(1)} MiB`);
    expect(ms).toBeLessThan(20_000);
  });
});

describe('refusals', () => {
  const csv = { name: 'file', filename: 'tasks.csv', content: 'Name\nA\n' };

  it('no file, not multipart, an unknown or old format, an empty or damaged file, a bad has_header: 400', async () => {
    expect(await refused(400, 'ProjectTask', [{ name: 'has_header', value: 'true' }])).toMatch(/file/);
    const json = await t.api('POST', '/api/import-preview/ProjectTask', { file: 'Name\nA' });
    expect(json.statusCode).toBe(400);
    expect(await refused(400, 'ProjectTask', [{ name: 'file', filename: 'tasks.pdf', content: '%PDF-1.7 …' }])).toMatch(/format/);
    expect(await refused(400, 'ProjectTask', [{ name: 'file', filename: 'tasks.xls', content: Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0, 0]) }])).toMatch(/xls/);
    expect(await refused(400, 'ProjectTask', [{ name: 'file', filename: 'tasks.csv', content: '' }])).toMatch(/empty/);
    expect(await refused(400, 'ProjectTask', [{ name: 'file', filename: 'tasks.xlsx', content: 'Name,Deadline\n' }])).toMatch(/XLSX/);
    expect(await refused(400, 'ProjectTask', [{ name: 'file', filename: 'tasks.xlsx', content: readFileSync(new URL('damaged.xlsx', FIXTURES)) }])).toMatch(/XLSX/);
    const noSheet = handmadeWorkbook({ order: ['workbook', 'styles'], strings: async function* () {}, sheetRows: async function* () {} });
    expect(await refused(400, 'ProjectTask', [{ name: 'file', filename: 'tasks.xlsx', content: await collect(noSheet) }])).toMatch(/worksheet/);
    expect(await refused(400, 'ProjectTask', [{ name: 'file', filename: 'tasks.csv', content: Buffer.from([0x4e, 0, 0x61]) }])).toMatch(/CSV/);
    expect(await refused(400, 'ProjectTask', [{ name: 'has_header', value: 'maybe' }, csv])).toMatch(/has_header/);
    expect(await refused(400, 'ProjectTask', [{ name: 'upload', filename: 'tasks.csv', content: 'Name\nA\n' }])).toMatch(/'file'/);
    expect(await refused(400, 'ProjectTask', [csv, { ...csv }])).toMatch(/one file/);
  });

  it('multipart bodies are accepted by this route alone (its parser lives in the route\'s own scope)', async () => {
    const { payload, contentType } = multipart([csv]);
    const res = await t.app.inject({
      method: 'POST', url: '/api/query/ProjectTask', payload,
      headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': contentType },
    });
    expect(res.statusCode, res.body).toBe(415);
  });

  it('an unknown model is a 404; a model the key may not read a 403', async () => {
    await refused(404, 'NoSuchModel', [csv]);
    await refused(403, 'ProjectTask', [csv], { authorization: `Bearer ${noProjectKey}` });
    // The same key reads Language: its upload is previewed.
    expect((await upload('Language', [csv], { authorization: `Bearer ${noProjectKey}` })).statusCode).toBe(200);
  });

  it('a file over the size limit is a 400 naming the limit (the route under a 1 MiB limit)', async () => {
    const app = Fastify();
    installErrorHandler(app, false);
    const hook = apiContextHook(t.platform, new DatabaseSelector(t.platform.engine));
    app.addHook('onRequest', async (req) => { await hook(req); });
    registerImportPreviewRoutes(app, { maxFileBytes: 2 ** 20 });
    try {
      const big = `Name\n${'Task with a long enough name\n'.repeat(40_000)}`;
      const res = await upload('ProjectTask', [{ name: 'file', filename: 'big.csv', content: big }], {}, app);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail).toMatch(/1 MiB/);
      const small = await upload('ProjectTask', [csv], {}, app);
      expect(small.statusCode, small.body).toBe(200);
      expect(small.json().rows).toEqual([['A']]);
    } finally {
      await app.close();
    }
  });
});
