/**
 * A ManyToOne read along a field tree is columns of the statement's row (`"project.name"`), not a
 * JSON object built per row by PostgreSQL (`read/read-records.ts`, issue 29): these tests check
 * the statement, and that the records come back as before — nested links, empty links, a link
 * to a record the reader may not see, and links inside a to-many, which stay JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Company } from '../../modules/core/models/company.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    ids.customer = (await Contact.create({ name: 'Inline customer', city: 'Ghent' })).id;
    ids.project = (await ProjectProject.create({ name: 'Inline project', customer: ids.customer })).id;
    ids.bare = (await ProjectProject.create({ name: 'Inline bare project' })).id;
    ids.parent = (await ProjectTask.create({ name: 'Inline parent', project: ids.project })).id;
    ids.child = (await ProjectTask.create({ name: 'Inline child', project: ids.project, parent: ids.parent })).id;
    ids.orphan = (await ProjectTask.create({ name: 'Inline orphan', project: ids.bare })).id;
    const other = (await Company.create({ name: 'Inline other company' })).id;
    ids.foreign = (await Contact.create({ name: 'Inline foreign', company: other })).id;
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const FIELDS = ['name', 'parent.name', 'project.name', 'project.customer.name', 'project.customer.city'];

describe('a ManyToOne read as columns of the row', () => {
  it('is columns of one statement, and each record nests its links as before (null where empty)', async () => {
    const counted = await t.countStatements(async () => {
      const res = await t.api('POST', '/api/query/ProjectTask', {
        filter_str: `Q(project__in=[${ids.project}, ${ids.bare}])`, fields: FIELDS, order_by: ['name ASC'],
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual([
        {
          id: ids.child, display_name: 'Inline child', name: 'Inline child',
          parent: { id: ids.parent, display_name: 'Inline parent', name: 'Inline parent' },
          project: {
            id: ids.project, display_name: 'Inline project', name: 'Inline project',
            customer: { id: ids.customer, display_name: 'Inline customer', name: 'Inline customer', city: 'Ghent' },
          },
        },
        {
          id: ids.orphan, display_name: 'Inline orphan', name: 'Inline orphan', parent: null,
          project: { id: ids.bare, display_name: 'Inline bare project', name: 'Inline bare project', customer: null },
        },
        {
          id: ids.parent, display_name: 'Inline parent', name: 'Inline parent', parent: null,
          project: {
            id: ids.project, display_name: 'Inline project', name: 'Inline project',
            customer: { id: ids.customer, display_name: 'Inline customer', name: 'Inline customer', city: 'Ghent' },
          },
        },
      ]);
    });
    const select = counted.statements.find((s) => s.includes('FROM "project_task"'))!;
    expect(select).toContain('AS "project.customer.city"');
    expect(select).not.toContain('json_build_object');
  });

  it('a fetch by id too; a link to a record of another company reads as none', async () => {
    await t.run(() => ProjectProject.query({ id: ids.bare! }).update({ customer: ids.foreign }));
    try {
      // The API key's user is in the main company only: the foreign customer is not there for it.
      const res = await t.api('POST', `/api/fetch/ProjectTask/${ids.orphan}`, { fields: FIELDS });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().project).toEqual({ id: ids.bare, display_name: 'Inline bare project', name: 'Inline bare project', customer: null });
    } finally {
      await t.run(() => ProjectProject.query({ id: ids.bare! }).update({ customer: null }));
    }
  });

  it('links inside a to-many stay JSON and read the same', async () => {
    const res = await t.api('POST', `/api/fetch/ProjectProject/${ids.project}`, { fields: ['name', 'tasks.name', 'tasks.parent.name'] });
    expect(res.statusCode, res.body).toBe(200);
    const tasks = (res.json().tasks as { name: string; parent: unknown }[]).sort((a, b) => a.name.localeCompare(b.name));
    expect(tasks).toEqual([
      { id: ids.child, display_name: 'Inline child', name: 'Inline child', parent: { id: ids.parent, display_name: 'Inline parent', name: 'Inline parent' } },
      { id: ids.parent, display_name: 'Inline parent', name: 'Inline parent', parent: null },
    ]);
  });
});
