/**
 * The unit of work (`src/orm/unit-of-work.ts`, issue 26 item 1): a savepoint that rolls back
 * discards the after-commit jobs, record changes and pending assignments queued inside it, one
 * that is released hands them to the frame around it, savepoints nest, and without a
 * transaction after-commit work runs at once. The case the issue names first: model code that
 * calls a method inside a savepoint and catches its refusal — the refused call's notification
 * is never sent and its file release never performed, the kept call's are.
 *
 * Real bus (the platform's, listened to as a worker's socket hub does) and real file store (a
 * scratch directory); the change feed is a recording implementation of the ORM's port.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOnlyTransaction } from '../../src/api/read-only-transaction.js';
import { storageKey } from '../../src/files/content-address.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { currentEnv, runInEnv } from '../../src/orm/env.js';
import { makeEnv } from '../../src/orm/transaction.js';
import type { CommittedChanges, RecordChangeFeed } from '../../src/orm/record-changes.js';
import type { BusMessage } from '../../src/realtime/bus.js';
import { send_notification } from '../../src/realtime/send.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { model, type Rec } from '../support/orm.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { UOW_PROBE } from '../support/uow-probe.js';

let t: TestDatabase;
let tmp: string;
let local: LocalFileStore;
const heard: BusMessage[] = [];

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const keyOf = (content: string) => storageKey(t.name, sha(content));
const exists = async (key: string) => (await local.stat(key)) !== null;
const notified = () => heard.filter((m) => m.frame.type === 'notification' && (m.frame.data as Record<string, unknown>).title === 'UoW probe').map((m) => (m.frame.data as Record<string, unknown>).message);
const probe = () => model('UowProbe');
const work = () => currentEnv().work;
const notify = (tag: string) => send_notification(1, { title: 'UoW probe', message: tag });

class Refused extends Error {}

/** Polls `check` until true or `ms` pass; true when it held in time. */
async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** What was pushed once the deliveries of the pushes made so far are done (the in-process bus delivers on a later turn). */
async function pushed(): Promise<unknown[]> {
  await new Promise((r) => setTimeout(r, 50));
  return notified();
}

/** An attachment `uow-<tag>.txt` whose bytes are in the store before the upload (which so schedules no sweep of its own). */
async function attachmentFor(tag: string): Promise<string> {
  const content = `bytes of ${tag}`;
  await local.put(keyOf(content), Buffer.from(content));
  const res = await t.api('POST', '/api/create/Attachment', { name: `uow-${tag}.txt`, base64: Buffer.from(content).toString('base64') });
  expect(res.statusCode, res.body).toBe(200);
  return keyOf(content);
}

async function namesOf(modelName: string, filter: Record<string, unknown> = {}): Promise<string[]> {
  const rows = await t.run(() => model(modelName).query(filter).order_by('id ASC').read(['name']));
  return rows.map((r) => r.name as string);
}

/** A change feed that records what units of work hand over (the database counts as watched). */
function recordingFeed(): RecordChangeFeed & { handed: CommittedChanges[] } {
  const handed: CommittedChanges[] = [];
  return { handed, isWatched: () => true, publish: (changes) => handed.push(changes) };
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ff-uow-'));
  await writeProbeModule(join(tmp, 'modules'), 'uow_probe', { 'models/index.ts': UOW_PROBE, 'security/access.yaml': adminAccessYaml(['UowProbe']) });
  t = await testDatabase('core', [join(tmp, 'modules')]);
  await t.platform.install(t.name, { init: ['uow_probe'] });
  local = new LocalFileStore(join(tmp, 'store'));
  t.platform.files.configure({ store: local, uploadLimit: 1 << 20 });
  t.platform.bus.subscribe((m) => heard.push(m), (db) => db === t.name);
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('a method called inside a savepoint that raises, caught by model code', () => {
  it('sends nothing and releases no file for the refused call; the kept call’s are sent and performed', async () => {
    const kept = await attachmentFor('kept-m');
    const refused = await attachmentFor('refused-m');
    heard.length = 0;
    const res = await t.api('POST', '/api/execute/UowProbe/caught', { request_body: { inputs: { kept: 'kept-m', refused: 'refused-m' } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await eventually(async () => !(await exists(kept))), 'the kept call’s bytes are swept').toBe(true);
    expect(await pushed()).toEqual(['kept-m']);
    expect(await namesOf('UowProbe', { name__in: ['kept-m', 'refused-m'] })).toEqual(['kept-m']);
    expect(await namesOf('Attachment', { name__in: ['uow-kept-m.txt', 'uow-refused-m.txt'] })).toEqual(['uow-refused-m.txt']);
    expect(await exists(refused)).toBe(true);
  });
});

describe('savepoints', () => {
  it('rolled back: the after-commit jobs queued inside are dropped, the error goes on; released: they join and run after commit', async () => {
    heard.length = 0;
    const ran: string[] = [];
    await t.run(async () => {
      work().afterCommit(() => ran.push('before'));
      await expect(work().savepoint(async () => {
        notify('inside refused');
        work().afterCommit(() => ran.push('inside refused'));
        throw new Refused();
      })).rejects.toBeInstanceOf(Refused);
      await work().savepoint(async () => {
        notify('inside kept');
        work().afterCommit(() => ran.push('inside kept'));
      });
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['before', 'inside kept']);
    expect(await pushed()).toEqual(['inside kept']);
  });

  it('nest: an inner savepoint rolled back drops its own jobs only; an outer one rolled back drops what inner ones released', async () => {
    heard.length = 0;
    const ran: string[] = [];
    const job = (name: string) => () => work().afterCommit(() => ran.push(name));
    const depths: number[] = [];
    await t.run(async () => {
      await work().savepoint(async () => {
        job('outer')();
        await work().savepoint(async () => {
          depths.push(work().depth);
          job('inner released')();
          await work().savepoint(async () => {
            depths.push(work().depth);
            job('innermost refused')();
            notify('innermost refused');
            throw new Refused();
          }).catch((err) => expect(err).toBeInstanceOf(Refused));
        });
      });
      await work().savepoint(async () => {
        await work().savepoint(async () => {
          job('inner of refused outer')();
          notify('inner of refused outer');
        });
        throw new Refused();
      }).catch((err) => expect(err).toBeInstanceOf(Refused));
      const value = await work().savepoint(async () => {
        job('dry run')();
        return 42;
      }, { keep: () => false });
      expect(value).toBe(42);
      expect(work().depth).toBe(0);
    });
    expect(depths).toEqual([2, 3]);
    expect(ran).toEqual(['outer', 'inner released']);
    expect(await pushed()).toEqual([]);
  });

  it('rolled back: the records it wrote are gone and the record changes it reported are not handed to the feed', async () => {
    const [a, b, c] = await t.run(async () => {
      const ids: number[] = [];
      for (const name of ['rc a', 'rc b', 'rc c']) ids.push((await probe().create({ name })).id);
      return ids;
    });
    const feed = recordingFeed();
    await t.run(async () => {
      // The first change of the unit of work is made inside a savepoint that rolls back: the
      // hand-over it queued goes with it, and a later change queues its own.
      await work().savepoint(async () => {
        await probe().query({ id: a }).update({ name: 'rc a renamed' });
        throw new Refused();
      }).catch((err) => expect(err).toBeInstanceOf(Refused));
      expect(work().recordChanges.size).toBe(0);
      await probe().query({ id: b }).update({ name: 'rc b renamed' });
      await work().savepoint(async () => {
        await probe().query({ id: c }).update({ name: 'rc c renamed' });
        throw new Refused();
      }).catch((err) => expect(err).toBeInstanceOf(Refused));
      await work().savepoint(() => probe().query({ id: a }).update({ name: 'rc a kept' }));
    }, { changeFeed: feed });
    expect(feed.handed).toHaveLength(1);
    expect(feed.handed[0]!.records.map((r) => [r.id, r.fields])).toEqual([[b, ['name']], [a, ['name']]]);
    expect(await namesOf('UowProbe', { id__in: [a, b, c] })).toEqual(['rc a kept', 'rc b renamed', 'rc c']);
  });

  it('rolled back: the fields assigned inside are never written; released: they are written before the release', async () => {
    const id = await t.run(async () => (await probe().create({ name: 'assigned' })).id);
    await t.run(async () => {
      const [record] = (await probe().browse([id])) as Rec[];
      await work().savepoint(async () => {
        record!.name = 'assigned in a refused savepoint';
        expect(work().pendingWrites.size).toBe(1);
        throw new Refused();
      }).catch((err) => expect(err).toBeInstanceOf(Refused));
      expect(work().pendingWrites.size).toBe(0);
      expect(await namesOf('UowProbe', { id })).toEqual(['assigned']);
    });
    expect(await namesOf('UowProbe', { id })).toEqual(['assigned']);
    await t.run(async () => {
      const [record] = (await probe().browse([id])) as Rec[];
      await work().savepoint(async () => {
        record!.name = 'assigned in a kept savepoint';
      });
      expect(work().pendingWrites.size).toBe(0);
      // Written inside the savepoint, so a refused outer one would take it back with the rest.
      await work().savepoint(async () => {
        await work().savepoint(async () => {
          record!.name = 'assigned, released, then rolled back';
        });
        throw new Refused();
      }).catch((err) => expect(err).toBeInstanceOf(Refused));
    });
    expect(await namesOf('UowProbe', { id })).toEqual(['assigned in a kept savepoint']);
  });

  it('read-only work inside a transaction keeps nothing it queued', async () => {
    heard.length = 0;
    const ran: string[] = [];
    await t.run(async () => {
      await readOnlyTransaction(async () => {
        notify('read only');
        work().afterCommit(() => ran.push('read only'));
      });
      expect(work().depth).toBe(0);
    });
    expect(ran).toEqual([]);
    expect(await pushed()).toEqual([]);
  });
});

describe('without a transaction', () => {
  it('after-commit work runs at once (the pool itself: each statement is already durable)', async () => {
    const db = await t.platform.database(t.name);
    const registry = await t.platform.registry(t.name);
    heard.length = 0;
    const ran: string[] = [];
    await runInEnv(makeEnv(db, registry, db.executor, { bus: t.platform.bus }), async () => {
      expect(work().inTransaction).toBe(false);
      work().afterCommit(() => ran.push('at once'));
      expect(ran).toEqual(['at once']);
      notify('outside');
      await expect(work().savepoint(async () => 1)).rejects.toThrow(/A savepoint needs a transaction/);
    });
    expect(await pushed()).toEqual(['outside']);
  });
});
