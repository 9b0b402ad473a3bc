/**
 * An explicit empty list of ids (CONTRACTS C1, issue 25 item 8) on every route that takes one —
 * a selection's `ids: []`, a bare `[]`, execute's `ids: []`, the report's `instance_ids: []`,
 * export's flat `ids: []` — names no record: it is the empty set, never "every record". A route
 * with an answer for nothing gives it (bulk routes, clone, execute, export: 200, nothing written,
 * an export of headers only); a report, which cannot print nothing, refuses every form of it alike
 * with 400. A selection that names no list and no filter (`{}`, `{exclude_ids}` alone,
 * `name_search: []`) stays a 400 on every selection route, execute and reports included.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

// exceljs ships CommonJS only.
const ExcelJS = createRequire(import.meta.url)('exceljs') as typeof import('exceljs');

let t: TestDatabase;
let taskIds: number[];
const REPORT = { model: 'ProjectTask', report_id: 'project.report_project_task' };

/** Every task as it is now: what a call that names nothing must leave alone. */
const tasks = () => t.run(async () => (await ProjectTask.query().with_archived().order_by('id ASC').read(['name', 'description', 'stage', 'active'])));

async function rowsOf(body: Buffer): Promise<number> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(body as never);
  return workbook.worksheets[0]!.rowCount;
}

beforeAll(async () => {
  t = await testDatabase('full');
  taskIds = await t.run(async () => (await ProjectTask.create_many([{ name: 'Empty one' }, { name: 'Empty two' }])).map((r) => r.id));
});
afterAll(async () => { await t?.close(); });

describe('an explicit empty list of ids names no record', () => {
  it('bulk-update, bulk-delete, bulk-create and clone: 200 with the empty answer, nothing written', async () => {
    const before = await tasks();
    const answers: [string, () => Promise<{ statusCode: number; body: string; json(): unknown }>, unknown][] = [
      ['bulk-update {selection: {ids: []}, vals}', () => t.api('PUT', '/api/bulk-update/ProjectTask', { selection: { ids: [] }, vals: { description: 'never' } }), { updated: 0, ids: [] }],
      ['bulk-update []', () => t.api('PUT', '/api/bulk-update/ProjectTask', []), { updated: 0, ids: [] }],
      ['bulk-delete {ids: []}', () => t.api('DELETE', '/api/bulk-delete/ProjectTask', { ids: [] }), { deleted: 0, ids: [] }],
      ['bulk-delete []', () => t.api('DELETE', '/api/bulk-delete/ProjectTask', []), { deleted: 0, ids: [] }],
      ['bulk-create []', () => t.api('POST', '/api/bulk-create/ProjectTask', []), []],
      ['clone {ids: []}', () => t.api('POST', '/api/clone/ProjectTask', { ids: [] }), []],
    ];
    for (const [label, call, expected] of answers) {
      const res = await call();
      expect(res.statusCode, `${label}: ${res.body}`).toBe(200);
      expect(res.json(), label).toEqual(expected);
    }
    expect(await tasks()).toEqual(before);
  });

  it('execute: the method runs on no record and answers an empty result, with ids: [] and with selection {ids: []}', async () => {
    const before = await tasks();
    for (const body of [{ ids: [] }, { selection: { ids: [] } }]) {
      const res = await t.api('POST', '/api/execute/ProjectTask/action_close', { ...body, request_body: { inputs: {} } });
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(200);
      expect(res.json().result).toEqual([]);
    }
    expect(await tasks()).toEqual(before);
  });

  it('export: ids: [] is a file of headers only, not every record', async () => {
    const fields = ['name'];
    const everything = await t.api('POST', '/api/export/ProjectTask', { fields });
    expect(everything.statusCode, everything.body).toBe(200);
    expect(await rowsOf(everything.rawPayload)).toBeGreaterThan(taskIds.length); // the header and every task
    const none = await t.api('POST', '/api/export/ProjectTask', { fields, ids: [] });
    expect(none.statusCode, none.body).toBe(200);
    expect(await rowsOf(none.rawPayload)).toBe(1);
  });

  it('generate_report: nothing to print is a 400 whether it comes as instance_ids: [] or selection {ids: []}', async () => {
    for (const body of [{ instance_ids: [] }, { selection: { ids: [] } }]) {
      const res = await t.api('POST', '/api/generate_report', { ...REPORT, ...body });
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ detail: expect.stringContaining('names no records'), error: 'BadRequest' });
    }
    // A filter that matches nothing is a fact of the data, not of the request: 404.
    const unmatched = await t.api('POST', '/api/generate_report', { ...REPORT, selection: { filter_str: "Q(name='no such task')" } });
    expect(unmatched.statusCode, unmatched.body).toBe(404);
  });
});

describe('a selection that names neither ids nor a filter', () => {
  it('is a 400 on execute and generate_report too, never every record', async () => {
    const before = await tasks();
    for (const selection of [{}, { exclude_ids: [taskIds[0]] }, { name_search: [] }]) {
      for (const res of [
        await t.api('POST', '/api/execute/ProjectTask/action_close', { selection, request_body: { inputs: {} } }),
        await t.api('POST', '/api/generate_report', { ...REPORT, selection }),
      ]) {
        expect(res.statusCode, `${JSON.stringify(selection)}: ${res.body}`).toBe(400);
        expect(res.json().detail).toContain('names no records');
      }
    }
    expect(await tasks()).toEqual(before);
  });
});
