/**
 * Relations between models: related_name reverse fields (registry, filters, reads), the three
 * on_delete behaviours (in the schema and in effect), ManyToMany through a join model and
 * self-referencing ManyToMany, OneToMany writes.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFound, ValidationError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import { type TestDatabase } from '../support/test-database.js';
import { type Rec, fixtureDatabase, model, rows } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await fixtureDatabase('full', ['orm_relations']);
});
afterAll(async () => {
  await t?.close();
});

const names = (recs: unknown) => (recs as Rec[]).map((r) => r.name as string);

describe('related_name', () => {
  it('creates the reverse OneToMany on the target, described in the registry', async () => {
    await t.run(async () => {
      const tasks = currentEnv().registry.meta('ProjectStage').fields.get('tasks');
      expect(tasks?.type).toBe('OneToMany');
      expect(tasks!.describe()).toMatchObject({ type: 'OneToMany', related_model: 'ProjectTask', related_name: 'stage' });
      const tagTasks = currentEnv().registry.meta('ProjectTag').fields.get('tasks');
      expect(tagTasks!.describe()).toMatchObject({ type: 'ManyToMany', related_model: 'ProjectTask' });
    });
    const res = await t.api('GET', '/api/get_registry/ProjectStage');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().tasks).toMatchObject({ type: 'OneToMany', related_model: 'ProjectTask' });
  });

  it('is usable in filters: Q(tasks__name=…) finds the stage, each once', async () => {
    await t.run(async () => {
      const Stage = model('ProjectStage');
      const Task = model('ProjectTask');
      const review = (await Stage.query({ name: 'Review' }).first())!;
      await Task.create_many([
        { name: 'rel-filter', stage: review.id }, { name: 'rel-filter', stage: review.id }, { name: 'rel-other', stage: review.id },
      ]);
      expect(await Stage.query("Q(tasks__name='rel-filter')").ids()).toEqual([review.id]);
      expect(await Stage.query("Q(tasks__name='rel-filter')").count()).toBe(1);
      expect(await Stage.query("Q(tasks__name='no such task')").ids()).toEqual([]);
      const tag = await model('ProjectTag').create({ name: 'rel-tag', tasks: [] });
      await Task.create({ name: 'tagged', tags: [tag.id] });
      expect(await model('ProjectTag').query("Q(tasks__name='tagged')").ids()).toEqual([tag.id]);
    });
  });

  it('is readable: awaited on a record and as a field path', async () => {
    await t.run(async () => {
      const stage = (await model('ProjectStage').create({ name: 'Rel stage', sequence: 99 })) as Rec;
      await model('ProjectTask').create_many([{ name: 'b task', stage: stage.id, sequence: 2 }, { name: 'a task', stage: stage.id, sequence: 1 }]);
      expect(names(await stage.tasks)).toEqual(['a task', 'b task']);
      const [read] = await model('ProjectStage').query({ id: stage.id }).read(['name', 'tasks.name']);
      expect((read!.tasks as Record<string, unknown>[]).map((x) => x.name)).toEqual(['a task', 'b task']);
    });
  });

  it('reverse of a self-referencing ManyToOne lists the children', async () => {
    await t.run(async () => {
      const Contact = model('Contact');
      const acme = (await Contact.create({ name: 'Acme Rel', is_company: true })) as Rec;
      await Contact.create_many([{ name: 'Zoe Rel', parent: acme.id }, { name: 'Adam Rel', parent: acme.id }]);
      expect(names(await acme.children)).toEqual(['Adam Rel', 'Zoe Rel']);
      expect(await Contact.query("Q(children__name='Zoe Rel')").ids()).toEqual([acme.id]);
    });
  });
});

describe('on_delete', () => {
  it('creates each foreign key with its declared action (SET NULL when none is declared)', async () => {
    await t.run(async () => {
      const fks = await rows<{ conname: string; confdeltype: string }>(sql`
        SELECT conname, confdeltype FROM pg_constraint WHERE conrelid = 'orm_pet'::regclass AND contype = 'f'`);
      const byName = Object.fromEntries(fks.map((f) => [f.conname, f.confdeltype]));
      expect(byName).toMatchObject({
        orm_pet_cascade_owner_id_fkey: 'c',
        orm_pet_setnull_owner_id_fkey: 'n',
        orm_pet_restrict_owner_id_fkey: 'r',
        orm_pet_default_owner_id_fkey: 'n',
      });
      expect(currentEnv().registry.meta('OrmPet').fields.get('default_owner')!.describe().on_delete).toBe('SET NULL');
    });
  });

  it('CASCADE deletes the referencing records', async () => {
    await t.run(async () => {
      const owner = await model('OrmOwner').create({ name: 'cascade' });
      const pets = await model('OrmPet').create_many([{ name: 'p1', cascade_owner: owner.id }, { name: 'p2', cascade_owner: owner.id }]);
      await owner.unlink();
      expect(await model('OrmPet').browse(pets.map((p) => p.id))).toEqual([]);
    });
  });

  it('SET NULL keeps the referencing records and empties their link', async () => {
    await t.run(async () => {
      const owner = await model('OrmOwner').create({ name: 'setnull' });
      const [a, b] = await model('OrmPet').create_many([{ name: 'p3', setnull_owner: owner.id }, { name: 'p4', default_owner: owner.id }]);
      await owner.unlink();
      const [a2, b2] = await model('OrmPet').browse([a!.id, b!.id]);
      expect(a2!._values.setnull_owner).toBeNull();
      expect(b2!._values.default_owner).toBeNull();
    });
  });

  it('RESTRICT refuses the delete with a ValidationError naming the referencing model and field', async () => {
    let ownerId = 0;
    await t.run(async () => {
      const owner = await model('OrmOwner').create({ name: 'restrict' });
      ownerId = owner.id;
      await model('OrmPet').create({ name: 'p5', restrict_owner: owner.id });
    });
    const err = await t.failure(async () => (await model('OrmOwner').get(ownerId)).unlink());
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain('Pet');
    expect(err.message).toContain("'restrict_owner'");
    const viaQueryset = await t.failure(() => model('OrmOwner').query({ id: ownerId }).delete());
    expect(viaQueryset).toBeInstanceOf(ValidationError);
    await t.run(async () => expect(await model('OrmOwner').browse([ownerId])).toHaveLength(1));
  });

  it('RESTRICT through the HTTP API is a 400 ValidationError, not a 500', async () => {
    const owner = await t.api('POST', '/api/create/OrmOwner', { name: 'restrict http' });
    await t.api('POST', '/api/create/OrmPet', { name: 'p6', restrict_owner: owner.json().id });
    const res = await t.api('DELETE', `/api/delete/OrmOwner/${owner.json().id}`);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'ValidationError' });
    expect(res.json().detail).toContain('restrict_owner');
    // The stages of the project module: a stage holding tasks cannot be deleted.
    const stage = await t.api('POST', '/api/create/ProjectStage', { name: 'Busy stage' });
    await t.api('POST', '/api/create/ProjectTask', { name: 'holds the stage', stage: stage.json().id });
    const res2 = await t.api('DELETE', `/api/delete/ProjectStage/${stage.json().id}`);
    expect(res2.statusCode, res2.body).toBe(400);
    expect(res2.json().error).toBe('ValidationError');
  });

  it('deleting a record that no longer exists is NotFound', async () => {
    const err = await t.failure(async () => {
      const owner = await model('OrmOwner').create({ name: 'gone' });
      await owner.unlink();
      await owner.unlink();
    });
    expect(err).toBeInstanceOf(NotFound);
  });
});

describe('ManyToMany through a join model', () => {
  it('stores each link as a record of the join model and creates no generated join table', async () => {
    await t.run(async () => {
      const [math, art] = await model('OrmCourse').create_many([{ name: 'Math' }, { name: 'Art' }]);
      const student = (await model('OrmStudent').create({ name: 'Ann', courses: [math!.id, art!.id] })) as Rec;
      const links = (await model('OrmEnrollment').query({ student: student.id }).all()) as Rec[];
      expect(links.map((l) => l._values.course).sort()).toEqual([math!.id, art!.id].sort());
      expect(names(await student.courses)).toEqual(['Art', 'Math']);
      // Neither side has a generated join table (the reverse side shares the join model's table).
      const tables = await rows<{ table_name: string }>(sql`SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_name LIKE ${'orm\\_%\\_rel'}`);
      expect(tables.map((r) => r.table_name)).toEqual(['orm_student_friends_rel']);
      const reverse = currentEnv().registry.meta('OrmCourse').fields.get('students') as unknown as { join: Record<string, unknown> };
      expect(reverse.join).toEqual({ table: 'orm_enrollment', sourceColumn: 'course_id', targetColumn: 'student_id', throughModel: 'OrmEnrollment' });
    });
  });

  it('replaces the links on write, and a join record created directly is a link', async () => {
    await t.run(async () => {
      const [c1, c2, c3] = await model('OrmCourse').create_many([{ name: 'C1' }, { name: 'C2' }, { name: 'C3' }]);
      const student = (await model('OrmStudent').create({ name: 'Bob', courses: [c1!.id, c2!.id] })) as Rec;
      await student.write({ courses: [c2!.id] });
      expect(names(await student.courses)).toEqual(['C2']);
      expect(await model('OrmEnrollment').query({ student: student.id }).count()).toBe(1);
      await model('OrmEnrollment').create({ student: student.id, course: c3!.id, note: 'late' });
      await student.reload();
      expect(names(await student.courses)).toEqual(['C2', 'C3']);
      // The reverse side reads and filters through the same join model.
      expect(names(await ((await model('OrmCourse').get(c3!.id)) as Rec).students)).toEqual(['Bob']);
      expect(await model('OrmStudent').query("Q(courses__name='C3')").ids()).toEqual([student.id]);
      const [read] = await model('OrmStudent').query({ id: student.id }).read(['courses.name']);
      expect((read!.courses as Record<string, unknown>[]).map((c) => c.name)).toEqual(['C2', 'C3']);
    });
  });

  it('writes from the reverse side link the other way round', async () => {
    await t.run(async () => {
      const [s1, s2] = await model('OrmStudent').create_many([{ name: 'Cid' }, { name: 'Dee' }]);
      const course = (await model('OrmCourse').create({ name: 'Reverse', students: [s1!.id, s2!.id] })) as Rec;
      expect(names(await course.students)).toEqual(['Cid', 'Dee']);
      expect(names(await ((await model('OrmStudent').get(s2!.id)) as Rec).courses)).toEqual(['Reverse']);
      expect(await model('OrmEnrollment').query({ course: course.id }).count()).toBe(2);
    });
  });

  it('deleting a linked record removes its join records', async () => {
    await t.run(async () => {
      const course = await model('OrmCourse').create({ name: 'Doomed' });
      const student = (await model('OrmStudent').create({ name: 'Eve', courses: [course.id] })) as Rec;
      await course.unlink();
      expect(await model('OrmEnrollment').query({ student: student.id }).count()).toBe(0);
      expect(await student.courses).toEqual([]);
    });
  });
});

describe('self-referencing ManyToMany', () => {
  it('links records of the same model one way, through a generated join table', async () => {
    await t.run(async () => {
      const [a, b, c] = await model('OrmStudent').create_many([{ name: 'F-a' }, { name: 'F-b' }, { name: 'F-c' }]);
      await a!.write({ friends: [b!.id, c!.id] });
      expect(names(await ((await model('OrmStudent').get(a!.id)) as Rec).friends)).toEqual(['F-b', 'F-c']);
      expect(await ((await model('OrmStudent').get(b!.id)) as Rec).friends).toEqual([]);
      expect(await model('OrmStudent').query("Q(friends__name='F-c')").ids()).toEqual([a!.id]);
      const [link] = await rows(sql`SELECT * FROM orm_student_friends_rel WHERE orm_student_id = ${a!.id} ORDER BY friends_id`);
      expect(link).toEqual({ orm_student_id: a!.id, friends_id: b!.id });
    });
  });
});

describe('OneToMany writes', () => {
  it('deletes lines left out when their inverse is CASCADE (tasks of a project)', async () => {
    await t.run(async () => {
      const project = (await model('ProjectProject').create({ name: 'O2M project', tasks: [{ name: 'keep' }, { name: 'drop' }] })) as Rec;
      const tasks = (await project.tasks) as Rec[];
      const keep = tasks.find((x) => x.name === 'keep')!;
      const drop = tasks.find((x) => x.name === 'drop')!;
      await project.write({ tasks: [keep.id, { id: keep.id, name: 'kept' }] });
      expect(names(await ((await model('ProjectProject').get(project.id)) as Rec).tasks)).toEqual(['kept']);
      expect(await model('ProjectTask').browse([drop.id])).toEqual([]);
    });
  });

  it('links existing records given by id', async () => {
    await t.run(async () => {
      const task = await model('ProjectTask').create({ name: 'orphan' });
      const project = (await model('ProjectProject').create({ name: 'Adopter', tasks: [task.id] })) as Rec;
      expect(((await model('ProjectTask').get(task.id)) as Rec)._values.project).toBe(project.id);
    });
  });

  it('rejects a value that is not a list', async () => {
    const err = await t.failure(() => model('ProjectProject').create({ name: 'bad', tasks: 'all' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'tasks'");
  });
});
