/**
 * Installing messaging into a database that already has users gives each of them a contact (issue
 * 27 item 1), and its Web Push key; sales orders are a `_mail_thread` whose salesperson (a `User`)
 * follows; the retention sweep deletes read rows older than `FF_MESSAGE_RETENTION_DAYS` and never
 * an unread one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { retentionDays, sweepReadRows } from '../../modules/messaging/feed/retention.js';
import { currentEnv } from '../../src/orm/env.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { sql } from '../../src/db/sql-fragment.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let before: number[] = [];

beforeAll(async () => {
  t = await testDatabase('core');
  before = await t.run(async () => {
    const groups = await Group.query({ identifier: 'core.group_user' }).ids();
    const made = await User.create_many([{ name: 'Before One', groups }, { name: 'Before Two', email: 'two@before.test', groups }]);
    return made.map((u) => u.id);
  });
  await t.platform.install(t.name, { init: ['messaging', 'sales'] });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const model = (name: string) => new QuerySet(currentEnv().registry.meta(name));

describe('installing messaging', () => {
  it('gives every user that existed before it a contact with their name and e-mail, and the database a push key', async () => {
    await t.run(async () => {
      const users = await model('User').with_archived().ids();
      expect(users).toEqual(expect.arrayContaining(before));
      const contacts = await model('Contact').with_archived().filter({ user__in: users }).read(['name', 'email', 'user', 'company']);
      expect(new Set(contacts.map((c) => (c.user as { id: number }).id))).toEqual(new Set(users));
      expect(contacts.find((c) => c.name === 'Before Two')).toMatchObject({ email: 'two@before.test', company: null });
      expect(await model('PushKey').count()).toBe(1);
    });
  });

  it('upgrading runs the hook again without a second contact or key', async () => {
    await t.platform.install(t.name, { update: ['messaging'] });
    await t.run(async () => {
      const users = await model('User').with_archived().ids();
      expect(await model('Contact').with_archived().filter({ user__in: users }).count()).toBe(users.length);
      expect(await model('PushKey').count()).toBe(1);
    });
  });

  it('gives the notified rows the indexes the feed needs and no redundant one; an upgrade drops those an older version made', async () => {
    const indexes = () => t.run(async () => (await sql<{ name: string; def: string }>`SELECT indexname AS name, indexdef AS def FROM pg_indexes
      WHERE tablename = 'fk_message_notified_contact' ORDER BY 1`.execute(currentEnv().work.trx)).rows);
    const expected = [
      'fk_message_notified_contact_contact_id_message_id_uniq', 'fk_message_notified_contact_identifier_uniq',
      'fk_message_notified_contact_message_id_idx', 'fk_message_notified_contact_pkey', 'fk_message_notified_contact_read_date',
      'fk_message_notified_contact_unread',
    ];
    expect((await indexes()).map((i) => i.name)).toEqual(expected);
    // The unique index leads with the contact: it is the contact key's index and the feed's order.
    expect((await indexes()).find((i) => i.name.endsWith('_uniq') && i.def.includes('contact_id'))!.def).toMatch(/\(contact_id, message_id\)/);
    expect((await indexes()).find((i) => i.name.endsWith('_unread'))!.def).toMatch(/\(contact_id, message_id DESC\) INCLUDE \(model, document\) WHERE \(read IS NOT TRUE\)/);
    // A database notified by an earlier version: its four superseded indexes go at the next upgrade.
    await t.run(async () => {
      for (const statement of [
        sql`CREATE INDEX fk_message_notified_contact_feed ON fk_message_notified_contact (contact_id, message_id DESC)`,
        sql`CREATE UNIQUE INDEX fk_message_notified_contact_message_id_contact_id_uniq ON fk_message_notified_contact (message_id, contact_id)`,
        sql`CREATE INDEX fk_message_notified_contact_contact_id_idx ON fk_message_notified_contact (contact_id)`,
        sql`CREATE INDEX fk_message_notified_contact_record ON fk_message_notified_contact (contact_id, model, document) WHERE read IS NOT TRUE`,
      ]) await statement.execute(currentEnv().work.trx);
    });
    expect(await indexes()).toHaveLength(expected.length + 4);
    await t.platform.install(t.name, { update: ['messaging'] });
    expect((await indexes()).map((i) => i.name)).toEqual(expected);
  });

  it('a sales order is a thread its salesperson (a User) follows', async () => {
    const customer = await t.run(async () => (await currentEnv().registry.meta('Contact').cls.create({ name: 'Thread customer' })).id);
    const res = await t.api('POST', '/api/create/SaleOrder', { customer, user: before[0] });
    expect(res.statusCode, res.body).toBe(200);
    const order = res.json().id;
    const fetched = await t.api('POST', `/api/fetch/SaleOrder/${order}`, { fields: ['followers'] });
    const followerUsers = fetched.json().followers.map((f: { user_id: number | null }) => f.user_id);
    expect(followerUsers).toContain(before[0]);
  });
});

describe('retention', () => {
  it('deletes read rows read before the cutoff, keeps recent read rows and every unread row', async () => {
    const kept = await t.run(async () => {
      const { registry, work } = currentEnv();
      const customer = (await registry.meta('Contact').cls.create({ name: 'Retention customer' })).id;
      const task = (await registry.meta('SaleOrder').cls.create({ customer, user: before[1] })).id;
      const contact = (await model('Contact').filter({ user: before[0] }).ids())[0]!;
      const Message = registry.meta('Message').cls;
      const junction = registry.meta('FkMessageNotifiedContact');
      const rows: Record<string, number> = {};
      for (const [name, read, daysAgo] of [['old-read', true, 200], ['new-read', true, 10], ['old-unread', false, 400]] as const) {
        const m = await Message.create({ model: 'SaleOrder', document: task, content: name });
        await sql`INSERT INTO ${sql.table(junction.table)} (message_id, contact_id, read, read_date, model, document, created_date, updated_date)
          VALUES (${m.id}, ${contact}, ${read}, ${read ? new Date(Date.now() - daysAgo * 86_400_000).toISOString() : null}::timestamptz, 'SaleOrder', ${task}, now(), now())`.execute(work.trx);
        rows[name] = m.id;
      }
      const swept = await sweepReadRows(new Date(Date.now() - retentionDays()! * 86_400_000));
      expect(swept).toBe(1);
      return (await model('FkMessageNotifiedContact').with_archived().filter({ message__in: Object.values(rows) }).read(['message'])).map((r) => (r.message as { id: number }).id).sort();
    });
    expect(kept).toHaveLength(2);
  });

  it('FF_MESSAGE_RETENTION_DAYS: 180 by default, 0 keeps forever, nonsense is refused', () => {
    expect(retentionDays({})).toBe(180);
    expect(retentionDays({ FF_MESSAGE_RETENTION_DAYS: '30' })).toBe(30);
    expect(retentionDays({ FF_MESSAGE_RETENTION_DAYS: '0' })).toBeNull();
    expect(() => retentionDays({ FF_MESSAGE_RETENTION_DAYS: 'soon' })).toThrow(/whole number of days/);
  });
});
