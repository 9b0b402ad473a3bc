/**
 * Hostile filter text (ARCHITECTURE §4): parsed, never evaluated; every error is a 400
 * QuerySyntaxError naming the offending token and its position; values travel as parameters, so
 * none of the hostile text ever reaches the database as SQL text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONDITIONS, MAX_FILTER_DEPTH, MAX_FILTER_LENGTH, MAX_LIST_ITEMS } from '../../src/orm/query/filter-parser.js';
import { MAX_QUERY_ALIASES } from '../../src/orm/query/query-scope.js';
import { MAX_SEARCH_TERMS } from '../../src/orm/queryset.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let taskCount: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(() => ProjectTask.create_many([{ name: 'x' }, { name: 'y' }, { name: "O'Brien" }]));
  taskCount = 3;
});
afterAll(async () => { await t?.close(); });

async function expectSyntaxError(filter: string, detail: string, route = '/api/query/ProjectTask', key = 'filter_str') {
  const res = await t.api('POST', route, { [key]: filter, fields: ['name'] });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
  expect(res.json()).toMatchObject({ detail, error: 'QuerySyntaxError' });
}

async function names(filter: string): Promise<string[]> {
  const res = await t.api('POST', '/api/query/ProjectTask', { filter_str: filter, fields: ['name'], order_by: ['name ASC'] });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return res.json().map((r: any) => r.name);
}

async function tableIntact() {
  expect(await t.run(() => ProjectTask.query().count())).toBe(taskCount);
}

describe('precise 400s', () => {
  it('an unknown field', async () => {
    await expectSyntaxError("Q(nope='x')", "Unknown field 'nope' on model ProjectTask (at position 2)");
    await expectSyntaxError("Q(name='x') & Q(stage__nope=1)", "Unknown field 'nope' on model ProjectStage (at position 16)");
  });

  it('an unknown lookup', async () => {
    await expectSyntaxError("Q(name__regex='.*')", "Unknown lookup 'regex' for Char field 'name' (at position 2)");
    await expectSyntaxError("Q(deadline__year=2024)", "Unknown lookup 'year' for Date field 'deadline' (at position 2)");
  });

  it('unbalanced parentheses', async () => {
    await expectSyntaxError("(Q(name='x')", "Unbalanced parentheses: '(' is never closed (at position 0)");
    await expectSyntaxError("Q(name='x'))", "Unbalanced parentheses: ')' has no matching '(' (at position 11)");
    await expectSyntaxError("Q(name='x'", "Unbalanced parentheses: '(' is never closed (at position 1)");
  });

  it('SQL fragments outside a string are syntax errors', async () => {
    await expectSyntaxError('Q(name=1) OR 1=1', "Trailing input after expression: 'OR 1=1' (at position 10)");
    await expectSyntaxError("Q(name='x'); DROP TABLE project_task; --')", "Unexpected character ';' (at position 11)");
    await expectSyntaxError("Q(name=x)", "Unknown value 'x' (strings must be quoted; known words are True, False, None, true, false, null, user_id, company_id, company_ids, today, now) (at position 7)");
    await expectSyntaxError("Q(name='x') -- comment", "Unexpected character '-' (at position 12)");
    await expectSyntaxError("Q(name='x') UNION SELECT 1", "Trailing input after expression: 'UNION SELECT 1' (at position 12)");
    // A bare word as a value is never looked up or run: only the listed keywords are known.
    await expectSyntaxError('Q(name=__import__)', "Unknown value '__import__' (strings must be quoted; known words are True, False, None, true, false, null, user_id, company_id, company_ids, today, now) (at position 7)");
    await tableIntact();
  });

  it('SQL inside a string is just a value that matches nothing', async () => {
    expect(await names(`Q(name="x'); DROP TABLE project_task; --")`)).toEqual([]);
    expect(await names(`Q(name__icontains="' OR '1'='1")`)).toEqual([]);
    expect(await names(`Q(name="x' OR 1=1 --")`)).toEqual([]);
    // A quote in a value is data: it matches the record that has it.
    expect(await names(`Q(name="O'Brien")`)).toEqual(["O'Brien"]);
    expect(await names(`Q(name='O\\'Brien')`)).toEqual(["O'Brien"]);
    await tableIntact();
  });

  it(`${(10_000).toLocaleString('en')} nested parentheses are refused without exhausting the stack`, async () => {
    const deep = `${'('.repeat(10_000)}Q(name='x')${')'.repeat(10_000)}`;
    await expectSyntaxError(deep, `Filter expression is nested too deeply (more than ${MAX_FILTER_DEPTH} levels) (at position ${MAX_FILTER_DEPTH})`);
    await expectSyntaxError(`${'~'.repeat(10_000)}Q(name='x')`, `Filter expression is nested too deeply (more than ${MAX_FILTER_DEPTH} levels) (at position ${MAX_FILTER_DEPTH})`);
    await expectSyntaxError(`Q(name__in=${'['.repeat(10_000)}'x'${']'.repeat(10_000)})`, `Filter expression is nested too deeply (more than ${MAX_FILTER_DEPTH} levels) (at position ${'Q(name__in='.length + MAX_FILTER_DEPTH})`);
    // Up to the limit nesting is fine.
    const ok = `${'('.repeat(MAX_FILTER_DEPTH - 1)}Q(name='x')${')'.repeat(MAX_FILTER_DEPTH - 1)}`;
    expect(await names(ok)).toEqual(['x']);
  });

  it('a 1 MB string reaches the parser and is refused as too long', async () => {
    const huge = `Q(name='${'a'.repeat(1024 * 1024)}')`;
    await expectSyntaxError(huge, `Filter expression is too long (${huge.length} characters, at most ${MAX_FILTER_LENGTH}) (at position ${MAX_FILTER_LENGTH})`);
    await expectSyntaxError(huge, `Filter expression is too long (${huge.length} characters, at most ${MAX_FILTER_LENGTH}) (at position ${MAX_FILTER_LENGTH})`, '/api/name_search/ProjectTask', 'filter');
  });

  it('too many conditions, list items or traversed relations are refused before PostgreSQL plans them', async () => {
    const tooMany = Array.from({ length: MAX_CONDITIONS + 1 }, (_, i) => `Q(id=${i})`).join('|');
    await expectSyntaxError(tooMany, `Filter expression has too many conditions (more than ${MAX_CONDITIONS}) (at position ${tooMany.lastIndexOf('Q(') + 2})`);
    const longList = `Q(id__in=[${Array.from({ length: MAX_LIST_ITEMS + 1 }, (_, i) => i).join(',')}])`;
    await expectSyntaxError(longList, `The list has too many items (more than ${MAX_LIST_ITEMS}) (at position ${longList.lastIndexOf(',') + 1})`);
    // 1,000 ORed to-many traversals parse fine but would keep PostgreSQL planning for minutes.
    const started = Date.now();
    await expectSyntaxError(
      Array.from({ length: 1000 }, (_, i) => `Q(tags__name='x${i}')`).join('|'),
      `Query traverses too many relations (more than ${MAX_QUERY_ALIASES - 1}); simplify the filter`,
    );
    await expectSyntaxError(
      Array.from({ length: 40 }, (_, i) => `Q(tags__tasks__tags__tasks__name='x${i}')`).join('|'),
      `Query traverses too many relations (more than ${MAX_QUERY_ALIASES - 1}); simplify the filter`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    // Within the bound, many traversals still work.
    expect(await names(Array.from({ length: 60 }, (_, i) => `Q(tags__name='x${i}')`).join('|'))).toEqual([]);
  });

  it('name_search terms and group fields are bounded too (no 500 from PostgreSQL limits)', async () => {
    const terms = await t.api('POST', '/api/query/ProjectTask', { name_search: Array.from({ length: 70_000 }, () => 'a') });
    expect(terms.statusCode).toBe(400);
    expect(terms.json()).toMatchObject({ detail: `At most ${MAX_SEARCH_TERMS} name_search terms`, error: 'BadRequest' });
    expect(await t.api('POST', '/api/query/ProjectTask', { name_search: Array.from({ length: MAX_SEARCH_TERMS }, () => 'x') }).then((r) => r.statusCode)).toBe(200);
    const groups = await t.api('POST', '/api/query/ProjectTask', { group_fields: Array.from({ length: 5000 }, () => 'name') });
    expect(groups.statusCode, groups.body.slice(0, 200)).toBe(200);
    expect(groups.json()).toEqual([
      { name: "O'Brien", count: 1, aggregates: {} }, { name: 'x', count: 1, aggregates: {} }, { name: 'y', count: 1, aggregates: {} },
    ]);
  });

  it('a NUL character in a value is a 400, not a 500', async () => {
    for (const body of [{ filter_str: "Q(name='a\\u0000b')" }, { filter_str: "Q(name='a\u0000b')" }, { name_search: ['a\u0000b'] }]) {
      const res = await t.api('POST', '/api/query/ProjectTask', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ error: expect.stringMatching(/^(ValidationError|QuerySyntaxError)$/) });
    }
    const create = await t.api('POST', '/api/create/ProjectTask', { name: 'nul\u0000name' });
    expect(create.statusCode).toBe(400);
    expect(create.json()).toMatchObject({ error: 'ValidationError' });
    await tableIntact();
  });

  it('hostile ordering, field and grouping entries are 400s', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ order_by: ['name; DROP TABLE project_task'] }, "Invalid ordering entry 'name; DROP TABLE project_task': expected '<field> ASC|DESC'", 'QuerySyntaxError'],
      [{ order_by: ['name ASC, (SELECT 1)'] }, "Invalid ordering entry 'name ASC, (SELECT 1)': expected '<field> ASC|DESC'", 'QuerySyntaxError'],
      [{ fields: ['name"; DROP TABLE project_task; --'] }, `Unknown field 'name"; DROP TABLE project_task; --' on model ProjectTask in path 'name"; DROP TABLE project_task; --'`, 'BadRequest'],
      [{ group_fields: ['name) FROM pg_user --'] }, "Cannot group by 'name) FROM pg_user --': not a groupable stored field of ProjectTask", 'BadRequest'],
      [{ footer_aggregates: ['sequence) FROM pg_user --'] }, "Cannot aggregate 'sequence) FROM pg_user --': not a stored field of ProjectTask", 'BadRequest'],
    ];
    for (const [body, detail, error] of cases) {
      const res = await t.api('POST', '/api/query/ProjectTask', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ detail, error });
    }
    await tableIntact();
  });
});

describe('nothing hostile reaches the database as SQL text', () => {
  it('every statement executed carries the values as parameters', async () => {
    const fragments = ['DROP TABLE', 'OR 1=1', "'1'='1", 'pg_user', 'UNION SELECT', 'aaaaaaaaaaaaaaaa', 'Brien'];
    const { statements } = await t.countStatements(async () => {
      await t.api('POST', '/api/query/ProjectTask', { filter_str: `Q(name="x'); DROP TABLE project_task; --")` });
      await t.api('POST', '/api/query/ProjectTask', { filter_str: `Q(name__icontains="' OR '1'='1") | Q(name="O'Brien")` });
      await t.api('POST', '/api/query/ProjectTask', { filter_str: 'Q(name=1) OR 1=1' });
      await t.api('POST', '/api/query/ProjectTask', { filter_str: "Q(name='x') UNION SELECT 1" });
      await t.api('POST', '/api/query/ProjectTask', { filter_str: `${'('.repeat(10_000)}Q(name='x')${')'.repeat(10_000)}` });
      await t.api('POST', '/api/query/ProjectTask', { filter_str: `Q(name='${'a'.repeat(1024 * 1024)}')` });
      await t.api('POST', '/api/query/ProjectTask', { name_search: ['a'.repeat(50_000), "x'); DROP TABLE project_task; --"] });
      await t.api('POST', '/api/name_search/ProjectTask', { term: "'; DROP TABLE project_task; --", filter: "Q(name='pg_user')" });
      await t.api('POST', '/api/create/ProjectTask', { name: "Robert'); DROP TABLE project_task; --" });
      await t.api('POST', '/api/query/ProjectTask', { order_by: ['name; DROP TABLE project_task'], group_fields: ['name) FROM pg_user --'] });
    });
    // The valid requests did run statements…
    expect(statements.some((s) => /FROM "project_task"/.test(s))).toBe(true);
    expect(statements.some((s) => /INSERT INTO "project_task"/.test(s))).toBe(true);
    // …but none contains any of the hostile text, and none is large.
    for (const s of statements) {
      for (const fragment of fragments) expect(s, s.slice(0, 200)).not.toContain(fragment);
      expect(s.length).toBeLessThan(5_000);
    }
    // The created record holds the hostile text verbatim, as data.
    const [robert] = await names("Q(name__startswith='Robert')");
    expect(robert).toBe("Robert'); DROP TABLE project_task; --");
    taskCount += 1;
    await tableIntact();
  });
});
