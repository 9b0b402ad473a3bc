/**
 * `QuerySet.for_update()`: the selected rows of the model's table are locked until the unit of
 * work ends, in ascending ids, within the read's own statement; a second locker waits, then reads
 * the row as the first left it. Statements that count or group cannot lock and refuse it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { type Rec, model } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await testDatabase('full');
});
afterAll(async () => {
  await t?.close();
});

const Task = () => model('ProjectTask');

let seq = 0;
/** A committed project with three tasks whose default order (sequence) is the reverse of their ids. */
async function seed(): Promise<{ project: number; ids: number[] }> {
  seq += 1;
  return t.run(async () => {
    const project = (await model('ProjectProject').create({ name: `Lock project ${seq}` })) as Rec;
    const stage = (await model('ProjectStage').create({ name: `Lock stage ${seq}` })) as Rec;
    const tasks = (await Task().create_many([3, 2, 1].map((sequence) => ({
      name: `task ${sequence}`, project: project.id, stage: stage.id, sequence,
    })))) as Rec[];
    return { project: project.id, ids: tasks.map((task) => task.id) };
  });
}

describe('for_update', () => {
  it('locks the root rows in id order in the read\'s one statement, joins read but not locked', async () => {
    const { project, ids } = await seed();
    let rows: Record<string, unknown>[] = [];
    const counted = await t.countStatements(() => t.run(async () => {
      rows = await Task().query({ project }).for_update().read(['name', 'stage.name']);
    }));
    const selects = counted.statements.filter((s) => /^SELECT/.test(s));
    expect(selects, counted.statements.join('\n')).toHaveLength(1);
    expect(selects[0]).toMatch(/LEFT JOIN "project_stage" AS "t1"/);
    expect(selects[0]).toMatch(/ORDER BY "t0"\."id" ASC FOR UPDATE OF "t0"$/);
    expect(rows.map((r) => r.id)).toEqual([...ids].sort((a, b) => a - b));
    expect((rows[0]!.stage as { name: string }).name).toMatch(/^Lock stage/);
    // Without the lock, the default order (sequence) holds: the ids come in the other order.
    expect(await t.run(() => Task().query({ project }).ids())).toEqual([...ids].sort((a, b) => b - a));
  });

  it('makes a second locker wait for the first to commit, then read the row as it was committed', async () => {
    const { ids: [id] } = await seed();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const first = t.run(async () => {
      expect(await Task().query({ id }).for_update().ids()).toEqual([id]);
      holding();
      await released;
      await Task().query({ id }).update({ name: 'renamed by the first' });
    });
    await Promise.race([held, first]); // a first that fails ends the test at once
    let secondRead = false;
    const second = t.run(async () => {
      const [row] = await Task().query({ id }).for_update().read(['name']);
      secondRead = true;
      return row!.name;
    });
    try {
      await sleep(400);
      expect(secondRead).toBe(false);
    } finally {
      release(); // the first commits whatever the check found
    }
    await first;
    expect(await second).toBe('renamed by the first');
  });

  it('locks through all(), first(), exists() and update() too', async () => {
    const { project, ids } = await seed();
    const counted = await t.countStatements(() => t.run(async () => {
      expect((await Task().query({ project }).for_update().all()).map((r) => r.id)).toEqual([...ids].sort((a, b) => a - b));
      expect((await Task().query({ project }).for_update().first())?.id).toBe(Math.min(...ids));
      expect(await Task().query({ project }).for_update().exists()).toBe(true);
      expect(await Task().query({ project }).for_update().update({ priority: '1' })).toBe(3);
    }));
    const locking = counted.statements.filter((s) => s.includes('FOR UPDATE OF "t0"'));
    expect(locking, counted.statements.join('\n')).toHaveLength(4);
  });

  it('refuses the statements that count or group, and an order of its own', async () => {
    const { project } = await seed();
    await t.run(async () => {
      const locked = Task().query({ project }).for_update();
      await expect(locked.count()).rejects.toThrow(/count\(\) cannot lock rows/);
      await expect(locked.aggregate({ planned_hours: 'sum' })).rejects.toThrow(/aggregate\(\) cannot lock rows/);
      await expect(locked.group(['stage'])).rejects.toThrow(/group\(\) cannot lock rows/);
      await expect(locked.read_counted(['name'])).rejects.toThrow(/read_counted\(\) cannot lock rows/);
      await expect(locked.order_by('name ASC').ids()).rejects.toThrow(/locks in id order/);
    });
  });
});
