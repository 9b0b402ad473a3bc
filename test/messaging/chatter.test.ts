/**
 * The messaging module end to end over the API (CONTRACTS C5): users have contacts, the chatter's
 * methods post and follow, assignees follow on every write path, the audience is followers plus
 * mentions minus the author, the feed counts, lists and marks read exactly, and the server-side
 * API of spec §6.5 does what it says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { User } from '../../modules/core/models/user.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { Message } from '../../modules/messaging/models/message.js';
import { Followers } from '../../modules/messaging/models/followers.js';
import { FkMessageNotifiedContact } from '../../modules/messaging/models/fk_message_notified_contact.js';
import { currentEnv } from '../../src/orm/env.js';
import { messagingPerson, type MessagingPerson } from '../support/messaging-person.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;

type Person = MessagingPerson;
const person = (name: string, groupIds?: readonly string[]): Promise<Person> => messagingPerson(t, name, groupIds);

const as = (p: Person | null): Record<string, string> => (p ? { authorization: `Bearer ${p.token}` } : {});

async function ok(res: { statusCode: number; body: string; json(): any }) {
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

async function task(vals: Record<string, unknown>, by: Person | null = null): Promise<number> {
  return (await ok(await t.api('POST', '/api/create/ProjectTask', { name: 'Chatter task', ...vals }, as(by)))).id;
}

async function followersOf(id: number): Promise<number[]> {
  const rec = await ok(await t.api('POST', `/api/fetch/ProjectTask/${id}`, { fields: ['followers'] }));
  return rec.followers.map((f: { contact: { id: number } }) => f.contact.id).sort((a: number, b: number) => a - b);
}

const post = (id: number, inputs: Record<string, unknown>, by: Person | null = null) =>
  t.api('POST', '/api/execute/ProjectTask/message_post', { ids: [id], request_body: { inputs } }, as(by));

const unread = async (p: Person) => (await ok(await t.api('GET', '/api/activity-stream/unread-count', undefined, as(p)))).count as number;

let ann: Person;
let bob: Person;
let cid: Person;

beforeAll(async () => {
  t = await testDatabase('full');
  ann = await person('Ann Chatter');
  bob = await person('Bob Chatter');
  cid = await person('Cid Chatter');
});
afterAll(async () => {
  await t?.close();
});

describe('contacts of users', () => {
  it('every user has a contact: created with the user, and the administrator of the template got one at install', async () => {
    await t.run(async () => {
      const users = await User.query().with_archived().ids();
      const having = (await Contact.query({ user__in: users }).with_archived().read(['user'])).map((c) => (c.user as { id: number }).id);
      expect(new Set(having)).toEqual(new Set(users));
    });
  });
});

describe('followers', () => {
  it('the creator and the assignee follow a task; assigning it later on update, bulk update and import adds the new assignee', async () => {
    const id = await task({ assignee: bob.contact }, ann);
    expect(await followersOf(id)).toEqual([ann.contact, bob.contact].sort((a, b) => a - b));
    await ok(await t.api('PUT', `/api/update/ProjectTask/${id}`, { assignee: cid.contact }));
    expect(await followersOf(id)).toContain(cid.contact);

    const [x, y] = [await task({}), await task({})];
    await ok(await t.api('PUT', '/api/bulk-update/ProjectTask', [{ id: x, assignee: bob.contact }, { id: y, assignee: cid.contact }]));
    expect(await followersOf(x)).toContain(bob.contact);
    expect(await followersOf(y)).toContain(cid.contact);
    await ok(await t.api('PUT', '/api/bulk-update/ProjectTask', { selection: { ids: [x, y] }, vals: { assignee: ann.contact } }));
    expect(await followersOf(x)).toContain(ann.contact);

    const imported = await ok(await t.api('POST', '/api/import/ProjectTask', {
      fields: ['name', 'assignee'], data: [['Name', 'Assignee'], ['Imported for Cid', 'Cid Chatter']],
    }));
    expect(imported.summary.created, JSON.stringify(imported)).toBe(1);
    expect(await followersOf(imported.details.creates[0].id)).toContain(cid.contact);
  });

  it('message_follow and message_unfollow make the caller follow and stop following; following twice is once', async () => {
    const id = await task({});
    await ok(await t.api('POST', '/api/execute/ProjectTask/message_follow', { ids: [id] }, as(cid)));
    await ok(await t.api('POST', '/api/execute/ProjectTask/message_follow', { ids: [id] }, as(cid)));
    expect((await followersOf(id)).filter((c) => c === cid.contact)).toHaveLength(1);
    await ok(await t.api('POST', '/api/execute/ProjectTask/message_unfollow', { ids: [id] }, as(cid)));
    expect(await followersOf(id)).not.toContain(cid.contact);
  });
});

describe('message_post and the feed', () => {
  it('a comment notifies the followers but its author; the feed lists it and the count agrees; mark read scopes', async () => {
    const id = await task({ assignee: bob.contact }, ann);
    const before = await unread(bob);
    const res = await ok(await post(id, { content: '<p>Hello <b>Bob</b> &amp; co<script>alert(1)</script><img src=x onerror=alert(1)></p>' }, ann));
    expect(res.result.id).toEqual(expect.any(Number));
    expect(await unread(bob)).toBe(before + 1);
    expect(await unread(ann)).toBe(0);
    const feed = await ok(await t.api('POST', '/api/activity-stream', { unread_only: true, limit: 5 }, as(bob)));
    expect(feed[0]).toMatchObject({
      message_id: res.result.id, model: 'ProjectTask', document: id, record_name: 'Chatter task',
      author: { id: ann.contact, display_name: 'Ann Chatter' }, body: 'Hello Bob & co', message_type: 'comment', read: false,
    });
    expect(feed[0].content).not.toMatch(/script|onerror/);
    const marked = await ok(await t.api('POST', '/api/activity-stream/read', { message_id: res.result.id }, as(bob)));
    expect(marked).toEqual({ updated: 1 });
    expect(await ok(await t.api('POST', '/api/activity-stream/read', { message_id: res.result.id }, as(bob)))).toEqual({ updated: 0 });
    expect(await ok(await t.api('POST', '/api/activity-stream/read', {}, as(bob)))).toEqual({ updated: 0 });
    expect(await unread(bob)).toBe(before);
  });

  it('the feed is newest first and pages with before_id; unread_only keeps the unread', async () => {
    const id = await task({ assignee: cid.contact }, ann);
    const posted: number[] = [];
    for (const content of ['p1', 'p2', 'p3', 'p4', 'p5']) posted.push((await ok(await post(id, { content }, ann))).result.id);
    const first = await ok(await t.api('POST', '/api/activity-stream', { limit: 2 }, as(cid)));
    expect(first.map((i: { message_id: number }) => i.message_id)).toEqual([posted[4], posted[3]]);
    const next = await ok(await t.api('POST', '/api/activity-stream', { limit: 2, before_id: first[1].message_id }, as(cid)));
    expect(next.map((i: { message_id: number }) => i.message_id)).toEqual([posted[2], posted[1]]);
    await ok(await t.api('POST', '/api/activity-stream/read', { message_id: posted[4] }, as(cid)));
    const unreadOnly = await ok(await t.api('POST', '/api/activity-stream', { limit: 2, unread_only: true }, as(cid)));
    expect(unreadOnly.map((i: { message_id: number }) => i.message_id)).toEqual([posted[3], posted[2]]);
    const both = await ok(await t.api('POST', '/api/activity-stream', { limit: 1 }, as(cid)));
    expect(both[0]).toMatchObject({ message_id: posted[4], read: true });
    const bad = await t.api('POST', '/api/activity-stream', { limit: 0 }, as(cid));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'BadRequest', field: 'limit' });
  });

  it('a note notifies only the contacts it mentions', async () => {
    const id = await task({ assignee: bob.contact }, ann);
    const [b, c] = [await unread(bob), await unread(cid)];
    await ok(await post(id, { content: 'Internal: @Cid', message_type: 'note', mention_ids: [cid.contact] }, ann));
    expect(await unread(bob)).toBe(b);
    expect(await unread(cid)).toBe(c + 1);
  });

  it('marking read by record and all; an API key may not mark read (403)', async () => {
    const id = await task({ assignee: bob.contact }, ann);
    await ok(await post(id, { content: 'one' }, ann));
    await ok(await post(id, { content: 'two' }, ann));
    expect(await ok(await t.api('POST', '/api/activity-stream/read', { model: 'ProjectTask', document: id }, as(bob)))).toEqual({ updated: 2 });
    await ok(await post(id, { content: 'three' }, ann));
    const all = await ok(await t.api('POST', '/api/activity-stream/read', { all: true }, as(bob)));
    expect(all.updated).toBeGreaterThanOrEqual(1);
    expect(await unread(bob)).toBe(0);
    const byKey = await t.api('POST', '/api/activity-stream/read', { all: true });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json()).toMatchObject({ error: 'AccessError' });
  });

  it('the thread reads newest first with authors, and a caller who cannot read the record cannot post on it', async () => {
    const id = await task({}, ann);
    await ok(await post(id, { content: 'first' }, ann));
    await ok(await post(id, { content: 'second' }, bob));
    const rec = await ok(await t.api('POST', `/api/fetch/ProjectTask/${id}`, { fields: ['messages'] }, as(cid)));
    expect(rec.messages.map((m: { content: string }) => m.content)).toEqual(['second', 'first']);
    expect(rec.messages[0].author).toEqual({ id: bob.contact, display_name: 'Bob Chatter' });
    const outsider = await person('Out Sider', ['core.group_user']);
    const refused = await post(id, { content: 'let me in' }, outsider);
    expect(refused.statusCode).toBeGreaterThanOrEqual(403);
  });
});

describe('server-side API (spec §6.5)', () => {
  it('create_message with send, record_followers, set_notified_contacts, notification_payload, and a second notify re-pushes without a second row', async () => {
    const id = await task({ assignee: bob.contact }, ann);
    await t.run(async () => {
      const followers = await Message.record_followers('ProjectTask', id);
      expect(followers.map((c) => c.id).sort()).toEqual([ann.contact, bob.contact].sort());
      const m = await Message.create_message({ model: 'ProjectTask', document: id, content: `<p>${'x'.repeat(150)}</p>`, author: ann.contact });
      const payload = await m.notification_payload();
      expect(payload).toEqual({ kind: 'message', model: 'ProjectTask', document: id, message_id: m.id, title: 'Ann Chatter', body: 'x'.repeat(140) });
      expect(await FkMessageNotifiedContact.query({ message: m.id }).with_archived().count()).toBe(1);
      await m.notify_record_followers();
      expect(await FkMessageNotifiedContact.query({ message: m.id }).with_archived().count()).toBe(1);
      const bare = await Message.create({ model: 'ProjectTask', document: id, content: 'bare', author: bob.contact });
      expect(await Message.set_notified_contacts(bare, [ann.contact, bob.contact, cid.contact], bob.contact, 'ProjectTask', id)).toBe(2);
      void currentEnv;
    });
  });
});
