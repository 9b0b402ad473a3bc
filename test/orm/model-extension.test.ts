/**
 * A later module extends models it does not own (extendModel): new fields, an overridden method
 * reaching the previous implementation with super — and only in the databases where that module
 * is installed: a second database in the same process, without it, keeps the plain models.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ValidationError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { FIXTURE_MODULES, type Rec, model } from '../support/orm.js';

/** With orm_ext installed. */
let extended: TestDatabase;
/** Without it. */
let plain: TestDatabase;
/** A contact created before orm_ext was installed. */
let preExistingId = 0;
beforeAll(async () => {
  [extended, plain] = await Promise.all([testDatabase('full', [FIXTURE_MODULES]), testDatabase('full')]);
  preExistingId = await extended.run(async () => (await model('Contact').create({ name: 'Before the extension' })).id);
  await extended.platform.install(extended.name, { init: ['orm_ext'] });
});
afterAll(async () => {
  await extended?.close();
  await plain?.close();
});

async function columns(table: string): Promise<string[]> {
  const { rows } = await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name = ${table}`.execute(currentEnv().work.trx);
  return rows.map((r) => r.column_name);
}

describe('in the database where the extending module is installed', () => {
  it('the model has the new fields, in the registry, the schema and the API', async () => {
    await extended.run(async () => {
      const meta = currentEnv().registry.meta('Contact');
      expect(meta.fields.get('orm_nickname')?.describe()).toMatchObject({ type: 'Char', max_length: 32 });
      expect(meta.fields.has('name')).toBe(true);
      expect(meta.module).toBe('contacts');
      expect(await columns('contact')).toEqual(expect.arrayContaining(['orm_nickname', 'orm_write_count']));
    });
    const reg = await extended.api('GET', '/api/get_registry/Contact');
    expect(reg.json().orm_nickname).toMatchObject({ type: 'Char' });
    const created = await extended.api('POST', '/api/create/Contact', { name: 'Nick', orm_nickname: 'nicky' });
    expect(created.statusCode, created.body).toBe(200);
    const fetched = await extended.api('POST', `/api/fetch/Contact/${created.json().id}`, { fields: ['orm_nickname', 'orm_write_count'] });
    expect(fetched.json()).toMatchObject({ orm_nickname: 'nicky', orm_write_count: 0 });
  });

  it('records that existed before the install get the new field’s default', async () => {
    await extended.run(async () => {
      const rec = (await model('Contact').get(preExistingId)) as Rec;
      expect(rec.orm_write_count).toBe(0);
      expect(rec.orm_nickname).toBeNull();
      await rec.write({ orm_nickname: 'old' });
      expect(rec.orm_write_count).toBe(1);
    });
  });

  it('the new fields are validated like any other', async () => {
    await expect(extended.run(() => model('Contact').create({ name: 'Long', orm_nickname: 'n'.repeat(33) }))).rejects.toBeInstanceOf(ValidationError);
  });

  it('an overridden method calls super: write still writes, and the extension adds its own effect', async () => {
    await extended.run(async () => {
      const rec = (await model('Contact').create({ name: 'Writer' })) as Rec;
      await rec.write({ city: 'Ghent' });
      await rec.write({ orm_nickname: 'w' });
      expect(rec.city).toBe('Ghent');
      expect(rec.orm_nickname).toBe('w');
      expect(rec.orm_write_count).toBe(2);
      expect(rec.orm_greeting()).toBe('Hello Writer');
    });
  });

  it('an override of another module’s method (ProjectTask.action_close) runs the original through super', async () => {
    const task = await extended.api('POST', '/api/create/ProjectTask', { name: 'close me' });
    const res = await extended.api('POST', '/api/execute/ProjectTask/action_close', { ids: [task.json().id] });
    expect(res.statusCode, res.body).toBe(200);
    const { result } = res.json();
    expect(result.extended).toBe(true);
    const fetched = await extended.api('POST', `/api/fetch/ProjectTask/${task.json().id}`, { fields: ['stage.is_closed', 'orm_close_note'] });
    expect(fetched.json().stage).toMatchObject({ id: result.stage, is_closed: true });
    expect(fetched.json().orm_close_note).toBe('closed through orm_ext');
  });

  it('static entry points of the imported declaration resolve to the composed class of the current database', async () => {
    await extended.run(async () => {
      const rec = (await Contact.create({ name: 'Via declaration', orm_nickname: 'decl' })) as Rec;
      expect(rec).toBeInstanceOf(Contact);
      expect(rec.constructor).toBe(model('Contact'));
      expect(rec.orm_nickname).toBe('decl');
      expect(rec.orm_greeting()).toBe('Hello Via declaration');
    });
  });
});

describe('in a second database of the same process, without the extending module', () => {
  it('the model has neither the fields nor the column', async () => {
    await plain.run(async () => {
      expect(currentEnv().registry.meta('Contact').fields.has('orm_nickname')).toBe(false);
      expect(await columns('contact')).not.toContain('orm_nickname');
    });
    const reg = await plain.api('GET', '/api/get_registry/Contact');
    expect(reg.statusCode, reg.body).toBe(200);
    expect(reg.json().orm_nickname).toBeUndefined();
  });

  it('writing the field is an error naming it, and the override does not run', async () => {
    await expect(plain.run(() => Contact.create({ name: 'No nick', orm_nickname: 'x' }))).rejects.toThrow(/orm_nickname/);
    await plain.run(async () => {
      const rec = (await Contact.create({ name: 'Plain' })) as Rec;
      await rec.write({ city: 'Bruges' });
      expect(rec.city).toBe('Bruges');
      expect(rec.orm_write_count).toBeUndefined();
      expect(rec.orm_greeting).toBeUndefined();
    });
    const task = await plain.api('POST', '/api/create/ProjectTask', { name: 'plain close' });
    const res = await plain.api('POST', '/api/execute/ProjectTask/action_close', { ids: [task.json().id] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result.extended).toBeUndefined();
  });

  it('the same Platform serves both databases with their own registries', async () => {
    // The extended database's platform opening the plain database builds the plain registry.
    await extended.platform.run(plain.name, {}, async () => {
      expect(currentEnv().registry.meta('Contact').fields.has('orm_nickname')).toBe(false);
      expect(currentEnv().registry.modules).not.toContain('orm_ext');
    });
    const [withExt, without] = await Promise.all([
      extended.platform.registry(extended.name),
      extended.platform.registry(plain.name),
    ]);
    expect(withExt.modules).toContain('orm_ext');
    expect(withExt.meta('Contact').cls).not.toBe(without.meta('Contact').cls);
    expect('orm_greeting' in without.meta('Contact').cls.prototype).toBe(false);
    expect('orm_greeting' in withExt.meta('Contact').cls.prototype).toBe(true);
    // The shared declaration is never modified.
    expect(Object.keys(Contact.fields)).not.toContain('orm_nickname');
  });
});
