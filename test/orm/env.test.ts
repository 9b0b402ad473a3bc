/**
 * The environment model code runs in: required (a clear error without one), carried through the
 * async call chain (nested code uses the caller's database, transaction and user), isolated
 * between concurrent units of work, and transactional (a failure rolls back every nested write).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { currentEnv, hasEnv, withEnv } from '../../src/orm/env.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { type Rec, model } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await testDatabase('full');
});
afterAll(async () => {
  await t?.close();
});

class Boom extends Error {}

describe('without an environment', () => {
  it('model code throws a clear error instead of touching some database', async () => {
    expect(hasEnv()).toBe(false);
    expect(() => currentEnv()).toThrow(/No FieldForge environment/);
    expect(() => Contact.query()).toThrow(/No FieldForge environment/);
    await expect(Contact.create({ name: 'orphan' })).rejects.toThrow(/No FieldForge environment/);
    await expect(Contact.browse([1])).rejects.toThrow(/No FieldForge environment/);
  });

  it('a queryset built inside an environment cannot run after it', async () => {
    const qs = await t.run(async () => Contact.query());
    await expect(qs.count()).rejects.toThrow(/No FieldForge environment/);
  });
});

describe('nested code', () => {
  it('sees the caller’s uncommitted writes (same transaction), other units of work do not', async () => {
    await t.run(async () => {
      const rec = await Contact.create({ name: 'Uncommitted Env' });
      const seenByNested = await (async () => {
        await new Promise((r) => setTimeout(r, 5));
        return Contact.query({ name: 'Uncommitted Env' }).ids();
      })();
      expect(seenByNested).toEqual([rec.id]);
      // A separate unit of work runs in its own transaction.
      expect(await t.run(() => Contact.query({ name: 'Uncommitted Env' }).ids())).toEqual([]);
      expect(currentEnv().work.trx).toBeDefined();
    });
    expect(await t.run(() => Contact.query({ name: 'Uncommitted Env' }).count())).toBe(1);
  });

  it('a write made by nested model code is rolled back when the unit of work fails', async () => {
    let taskId = 0;
    await t.run(async () => {
      taskId = (await ProjectTask.create({ name: 'Env rollback task', stage: null })).id;
    });
    await expect(t.run(async () => {
      await Contact.create({ name: 'Rolled Back Env' });
      // action_close queries the stages and writes the task: nested model code.
      const task = (await ProjectTask.get(taskId)) as Rec;
      await task.action_close();
      expect(((await ProjectTask.get(taskId)) as Rec)._values.stage).not.toBeNull();
      throw new Boom('fail after the nested writes');
    })).rejects.toBeInstanceOf(Boom);
    await t.run(async () => {
      expect(await Contact.query({ name: 'Rolled Back Env' }).count()).toBe(0);
      expect(((await ProjectTask.get(taskId)) as Rec)._values.stage).toBeNull();
    });
  });

  it('a database error inside nested code rolls back the earlier writes of the unit of work', async () => {
    await expect(t.run(async () => {
      await Contact.create({ name: 'Before Db Error' });
      await model('ContactTag').create_many([{ name: 'dup env tag' }, { name: 'dup env tag' }]);
    })).rejects.toThrow(/unique/);
    expect(await t.run(() => Contact.query({ name: 'Before Db Error' }).count())).toBe(0);
  });

  it('sees the uid, companies and context the unit of work was started with', async () => {
    const seen = await t.run(async () => {
      const inner = async () => {
        await Promise.resolve();
        const env = currentEnv();
        return { uid: env.uid, companyId: env.companyId, companyIds: env.companyIds, context: env.context, su: env.su };
      };
      return inner();
    }, { uid: 1, companyId: 1, context: { lang: 'fr' } });
    expect(seen).toEqual({ uid: 1, companyId: 1, companyIds: [1], context: { lang: 'fr' }, su: false });
    expect((await t.run(async () => currentEnv().su))).toBe(true);
  });

  it('withEnv changes members for the nested call only, keeping the transaction', async () => {
    await t.run(async () => {
      const outer = currentEnv();
      const inner = await withEnv({ uid: 42, context: { x: 1 } }, async () => {
        const env = currentEnv();
        return { uid: env.uid, context: env.context, sameTrx: env.work.trx === outer.work.trx, registry: env.registry === outer.registry };
      });
      expect(inner).toEqual({ uid: 42, context: { x: 1 }, sameTrx: true, registry: true });
      expect(currentEnv().uid).toBeNull();
    });
  });
});

describe('concurrent units of work', () => {
  it('each keeps its own environment across awaits', async () => {
    const worker = (uid: number) => t.run(async () => {
      const seen: (number | null)[] = [];
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, Math.random() * 5));
        seen.push(currentEnv().uid);
        await Contact.query({ name: `nobody ${uid}` }).count();
      }
      return seen;
    }, { uid });
    const [a, b, c] = await Promise.all([worker(1), worker(2), worker(3)]);
    expect(a).toEqual([1, 1, 1, 1, 1]);
    expect(b).toEqual([2, 2, 2, 2, 2]);
    expect(c).toEqual([3, 3, 3, 3, 3]);
  });
});

describe('after-commit work', () => {
  it('runs once the unit of work commits, and never when it rolls back', async () => {
    const ran: string[] = [];
    await t.run(async () => {
      currentEnv().work.afterCommit(() => ran.push('committed'));
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['committed']);
    await expect(t.run(async () => {
      currentEnv().work.afterCommit(() => ran.push('rolled back'));
      throw new Boom();
    })).rejects.toBeInstanceOf(Boom);
    expect(ran).toEqual(['committed']);
  });
});
