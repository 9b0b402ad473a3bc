/**
 * Who is told of a message, live (spec §6.1, §6.5, CONTRACTS C5), over real WebSockets on one
 * worker: followers get `activity_update` `message` with the notification payload; a viewer of the
 * record who does not follow it gets `record_message`; an `inbox` follower gets the feed row and no
 * frame; a follower who can no longer read the record is neither told nor counted, and "mark all"
 * marks its hidden rows; a rolled-back message tells nobody. The recipients' access, kept per
 * security version between posts, is read again as soon as access changes: in another unit of
 * work, in the posting one itself, and never kept from a unit of work that changed it and rolled
 * back.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { Message } from '../../modules/messaging/models/message.js';
import { addFollowers } from '../../modules/messaging/thread/follow.js';
import { buildApp } from '../../src/http/app.js';
import { TestSocket, type Frame } from '../support/socket-client.js';
import { messagingPerson, type MessagingPerson } from '../support/messaging-person.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;
let base: string;

type Person = MessagingPerson;
const person = (name: string): Promise<Person> => messagingPerson(t, name);

const headers = (p: Person) => ({ authorization: `Bearer ${p.token}`, 'x-db-name': t.name, 'content-type': 'application/json' });
const call = (p: Person, method: 'GET' | 'POST', url: string, body?: unknown) =>
  app.inject({ method, url, headers: headers(p), ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });

function open(p: Person): Promise<TestSocket> {
  return TestSocket.open(`${base}/api/ws?db=${t.name}`, { authorization: `Bearer ${p.token}` });
}

function activity(socket: TestSocket, kind: string): Record<string, any>[] {
  return socket.frames.filter((f: Frame) => f.type === 'activity_update' && f.data.kind === kind).map((f) => f.data);
}

async function watch(socket: TestSocket, model: string, id: number): Promise<void> {
  socket.send({ type: 'watch', data: { model, id } });
  await socket.until(() => app.realtime.watchersOf(t.name, model, id).size > 0, 3_000, 'watch');
}

let ann: Person;
let bob: Person;
let ivy: Person;
let vic: Person;
let lou: Person;

beforeAll(async () => {
  t = await testDatabase('full');
  app = await buildApp(t.platform);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  [ann, bob, ivy, vic, lou] = await Promise.all(['Ann Live', 'Bob Live', 'Ivy Inbox', 'Vic Viewer', 'Lou Lost'].map((n) => person(n)));
  await t.run(() => User.query({ id: ivy.uid }).update({ notification_preference: 'inbox' }));
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

async function taskFollowedBy(...people: Person[]): Promise<number> {
  return t.run(async () => {
    const task = await ProjectTask.create({ name: 'Live task' });
    await addFollowers('ProjectTask', people.map((p) => ({ document: task.id, contact: p.contact })));
    return task.id;
  });
}

describe('live notifications', () => {
  it('followers get `message` with the payload; a non-following viewer gets `record_message`; inbox gets none; the author none', async () => {
    const id = await taskFollowedBy(ann, bob, ivy);
    const [annS, bobS, ivyS, vicS] = await Promise.all([open(ann), open(bob), open(ivy), open(vic)]);
    await watch(vicS, 'ProjectTask', id);
    const posted = await call(ann, 'POST', '/api/execute/ProjectTask/message_post', { ids: [id], request_body: { inputs: { content: '<p>Ship it &lt;today&gt;</p>' } } });
    expect(posted.statusCode, posted.body).toBe(200);
    const messageId = posted.json().result.id;
    await bobS.until(() => activity(bobS, 'message').length > 0, 5_000, 'bob told');
    expect(activity(bobS, 'message')[0]).toEqual({
      kind: 'message', model: 'ProjectTask', document: id, message_id: messageId, title: 'Ann Live', body: 'Ship it <today>',
    });
    await vicS.until(() => activity(vicS, 'record_message').length > 0, 5_000, 'vic sees it');
    expect(activity(vicS, 'record_message')[0]).toMatchObject({ kind: 'record_message', model: 'ProjectTask', document: id, message_id: messageId });
    expect(activity(vicS, 'message')).toEqual([]);
    // A later message to Bob alone: by the time it arrives, nothing else for this one is on its way.
    await t.run(() => Message.create_message({ model: 'ProjectTask', document: id, content: 'marker', message_type: 'note', mention_ids: [bob.contact], author: ann.contact }));
    await bobS.until(() => activity(bobS, 'message').length > 1, 5_000, 'marker');
    expect(activity(ivyS, 'message')).toEqual([]);
    expect(activity(annS, 'message')).toEqual([]);
    expect(activity(bobS, 'record_message')).toEqual([]);
    const inbox = await call(ivy, 'GET', '/api/activity-stream/unread-count');
    expect(inbox.json()).toEqual({ count: 1 });
    for (const s of [annS, bobS, ivyS, vicS]) s.close();
  });

  it('a follower who lost the right to read the record is not told, not counted and not listed; mark all marks the hidden row', async () => {
    const id = await taskFollowedBy(ann, lou);
    const louS = await open(lou);
    await t.run(async () => {
      const projectUser = await Group.query({ identifier: 'project.group_project_user' }).ids();
      const [row] = await User.query({ id: lou.uid }).read(['groups']);
      const groups = (row!.groups as { id: number }[]).map((g) => g.id).filter((g) => !projectUser.includes(g));
      await User.query({ id: lou.uid }).update({ groups });
    });
    await t.run(() => Message.create_message({ model: 'ProjectTask', document: id, content: 'You cannot see this', author: ann.contact }));
    const count = await call(lou, 'GET', '/api/activity-stream/unread-count');
    expect(count.json()).toEqual({ count: 0 });
    expect((await call(lou, 'POST', '/api/activity-stream', {})).json()).toEqual([]);
    const marked = await call(lou, 'POST', '/api/activity-stream/read', { all: true });
    expect(marked.json()).toEqual({ updated: 1 });
    await new Promise((r) => setTimeout(r, 300));
    expect(activity(louS, 'message')).toEqual([]);
    louS.close();
  });

  it('posts over HTTP read the recipients\' access once per security version: losing the right is seen by the very next post', async () => {
    const kim = await person('Kim Kept');
    const id = await taskFollowedBy(ann, kim);
    const kimS = await open(kim);
    const post = async (content: string) => {
      const res = await call(ann, 'POST', '/api/execute/ProjectTask/message_post', { ids: [id], request_body: { inputs: { content } } });
      expect(res.statusCode, res.body).toBe(200);
    };
    await post('<p>First, seen</p>');
    await kimS.until(() => activity(kimS, 'message').length === 1, 5_000, 'kim told');
    // Kept from the first post: the second reads neither memberships nor grants again.
    const again = await t.countStatements(() => post('<p>Second, seen</p>'));
    await kimS.until(() => activity(kimS, 'message').length === 2, 5_000, 'kim told again');
    expect(again.statements.filter((s) => /user_groups_rel|"model_access"/.test(s))).toEqual([]);
    // Kim leaves the project's group (the security version moves): the next post knows at once.
    await t.run(async () => {
      const projectUser = await Group.query({ identifier: 'project.group_project_user' }).ids();
      const [row] = await User.query({ id: kim.uid }).read(['groups']);
      await User.query({ id: kim.uid }).update({ groups: (row!.groups as { id: number }[]).map((g) => g.id).filter((g) => !projectUser.includes(g)) });
    });
    await post('<p>Third, hidden</p>');
    await new Promise((r) => setTimeout(r, 300));
    expect(activity(kimS, 'message').map((m) => m.body)).toEqual(['First, seen', 'Second, seen']);
    kimS.close();
  });

  it('a unit of work that takes a follower\'s right away and then posts does not tell them, though an earlier post was kept', async () => {
    const joe = await person('Joe Kept');
    const id = await taskFollowedBy(ann, joe);
    const joeS = await open(joe);
    await t.run(() => Message.create_message({ model: 'ProjectTask', document: id, content: 'Before', author: ann.contact }));
    await joeS.until(() => activity(joeS, 'message').length === 1, 5_000, 'joe told');
    await t.run(async () => {
      const projectUser = await Group.query({ identifier: 'project.group_project_user' }).ids();
      const [row] = await User.query({ id: joe.uid }).read(['groups']);
      await User.query({ id: joe.uid }).update({ groups: (row!.groups as { id: number }[]).map((g) => g.id).filter((g) => !projectUser.includes(g)) });
      await Message.create_message({ model: 'ProjectTask', document: id, content: 'After, in the same transaction', author: ann.contact });
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(activity(joeS, 'message').map((m) => m.body)).toEqual(['Before']);
    joeS.close();
  });

  it('what a unit of work that changed access and rolled back saw is not kept for the version another change then makes', async () => {
    const [max, other] = await Promise.all([person('Max Kept'), person('Oli Other')]);
    const id = await taskFollowedBy(ann, max);
    const maxS = await open(max);
    const projectUser = await t.run(() => Group.query({ identifier: 'project.group_project_user' }).ids());
    const withoutProject = async (p: Person) => {
      const [row] = await User.query({ id: p.uid }).read(['groups']);
      await User.query({ id: p.uid }).update({ groups: (row!.groups as { id: number }[]).map((g) => g.id).filter((g) => !projectUser.includes(g)) });
    };
    // Max loses the project in a unit of work that posts, then rolls back: Max keeps his right.
    await expect(t.run(async () => {
      await withoutProject(max);
      await Message.create_message({ model: 'ProjectTask', document: id, content: 'Never sent', author: ann.contact });
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    // Another change moves the security version to the number the rolled-back one had seen.
    await t.run(() => withoutProject(other));
    await t.run(() => Message.create_message({ model: 'ProjectTask', document: id, content: 'Max may read this', author: ann.contact }));
    await maxS.until(() => activity(maxS, 'message').length === 1, 5_000, 'max told');
    expect(activity(maxS, 'message').map((m) => m.body)).toEqual(['Max may read this']);
    maxS.close();
  });

  it('a message whose unit of work rolls back tells nobody and leaves no row', async () => {
    const id = await taskFollowedBy(ann, bob);
    const bobS = await open(bob);
    const before = (await call(bob, 'GET', '/api/activity-stream/unread-count')).json().count;
    await t.failure(async () => {
      await Message.create_message({ model: 'ProjectTask', document: id, content: 'never', author: ann.contact });
      throw new Error('rolled back');
    });
    await t.run(() => Message.create_message({ model: 'ProjectTask', document: id, content: 'after', author: ann.contact }));
    await bobS.until(() => activity(bobS, 'message').length > 0, 5_000, 'after');
    expect(activity(bobS, 'message').map((d) => d.body)).toEqual(['after']);
    expect((await call(bob, 'GET', '/api/activity-stream/unread-count')).json().count).toBe(before + 1);
    bobS.close();
  });
});
