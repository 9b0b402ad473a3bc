/**
 * The export keeps the list's order (issue 25 item 9): `order_by` as `/api/query` takes it, the
 * rows of the file in that order across several pages of the stream — a non-unique field with
 * NULLs, ascending and descending (ties by id), a ManyToOne (the target's own order), explicit
 * `ids` taking the order (without one they keep the order sent); a bad entry is a 400 before any
 * byte. Without `order_by` the file stays in id order.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_PAGE_SIZE } from '../../src/api/export/export-rows.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const ExcelJS = createRequire(import.meta.url)('exceljs') as typeof import('exceljs');

let t: TestDatabase;
let project: number;
/** Every task of the project as created: id, name, planned hours (null for some), stage. */
let tasks: { id: number; name: string; hours: number | null; stage: number }[] = [];
let stages: { id: number; sequence: number }[] = [];
const COUNT = EXPORT_PAGE_SIZE * 2 + 500;

beforeAll(async () => {
  t = await testDatabase('full');
  project = (await api('POST', '/api/create/ProjectProject', { name: 'Export order' })).id;
  stages = await api('POST', '/api/query/ProjectStage', { fields: ['id', 'sequence'], order_by: ['sequence ASC'] });
  // Hours repeat (ties across page boundaries) and every seventh is empty; stages go backwards.
  const rows = Array.from({ length: COUNT }, (_, i) => ({
    name: `Task ${String(i).padStart(4, '0')}`, project,
    planned_hours: i % 7 === 3 ? null : (i * 37) % 11, stage: stages[stages.length - 1 - (i % stages.length)]!.id,
  }));
  const created: { id: number }[] = await api('POST', '/api/bulk-create/ProjectTask', rows);
  tasks = created.map((c, i) => ({ id: c.id, name: rows[i]!.name, hours: rows[i]!.planned_hours, stage: rows[i]!.stage }));
}, 120_000);
afterAll(async () => { await t?.close(); });

async function api(method: 'POST', url: string, body: unknown): Promise<any> {
  const res = await t.api(method, url, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The names in the exported file, in its order. */
async function exportedNames(body: Record<string, unknown>): Promise<string[]> {
  const res = await t.app.inject({
    method: 'POST', url: '/api/export/ProjectTask',
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
    payload: JSON.stringify({ fields: ['name'], ...body }),
  });
  expect(res.statusCode, res.body).toBe(200);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(res.rawPayload as never);
  const names: string[] = [];
  workbook.worksheets[0]!.eachRow((row, n) => { if (n > 1) names.push(String((row.values as unknown[])[1])); });
  return names;
}

const scope = () => ({ filter_str: `Q(project=${project})` });
const namesOf = (list: typeof tasks) => list.map((x) => x.name);
const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;

describe('the export in the list’s order', () => {
  it('a non-unique field with NULLs, ascending (NULLs last) and descending (NULLs first), ties by id, across pages', async () => {
    const asc = [...tasks].sort((a, b) => (a.hours === b.hours ? byId(a, b) : a.hours === null ? 1 : b.hours === null ? -1 : a.hours - b.hours));
    const desc = [...tasks].sort((a, b) => (a.hours === b.hours ? byId(a, b) : a.hours === null ? -1 : b.hours === null ? 1 : b.hours - a.hours));
    expect(await exportedNames({ ...scope(), order_by: ['planned_hours ASC'] })).toEqual(namesOf(asc));
    expect(await exportedNames({ ...scope(), order_by: ['planned_hours DESC'] })).toEqual(namesOf(desc));
    // The same order as the list's pages of /api/query.
    const listed: string[] = [];
    for (let page = 1; listed.length < COUNT; page++) {
      const rows = await api('POST', '/api/query/ProjectTask', { ...scope(), fields: ['name'], order_by: ['planned_hours DESC'], limit: 1000, page });
      if (!rows.length) break;
      listed.push(...rows.map((r: { name: string }) => r.name));
    }
    expect(listed).toEqual(namesOf(desc));
  });

  it('a ManyToOne orders by its target’s order, then by id; a search and exclusions keep it', async () => {
    const rank = new Map(stages.map((s, i) => [s.id, i]));
    const expected = [...tasks].sort((a, b) => rank.get(a.stage)! - rank.get(b.stage)! || byId(a, b));
    expect(await exportedNames({ ...scope(), order_by: ['stage ASC'] })).toEqual(namesOf(expected));
    const excluded = expected.slice(0, 3).map((x) => x.id);
    const searched = expected.filter((x) => x.name.includes('Task 1') && !excluded.includes(x.id));
    expect(await exportedNames({ ...scope(), name_search: ['Task 1'], exclude_ids: excluded, order_by: ['stage ASC'] })).toEqual(namesOf(searched));
  });

  it('explicit ids take the order given, and keep the order sent without one', async () => {
    const picked = [tasks[40]!, tasks[3]!, tasks[2000]!, tasks[17]!];
    expect(await exportedNames({ ids: picked.map((x) => x.id) })).toEqual(namesOf(picked));
    const ordered = [...picked].sort((a, b) => (a.hours === b.hours ? byId(a, b) : a.hours === null ? -1 : b.hours === null ? 1 : b.hours - a.hours));
    expect(await exportedNames({ ids: picked.map((x) => x.id), order_by: ['planned_hours DESC'] })).toEqual(namesOf(ordered));
  });

  it('without order_by the file stays in id order; a bad entry is a 400 before any byte', async () => {
    expect(await exportedNames(scope())).toEqual(namesOf([...tasks].sort(byId)));
    for (const order_by of [['no_such_field ASC'], ['name; DROP TABLE x'], 'name ASC']) {
      const res = await t.api('POST', '/api/export/ProjectTask', { ...scope(), fields: ['name'], order_by });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail, res.body).toMatch(/order|no_such_field|name; DROP/i);
    }
  });
});
