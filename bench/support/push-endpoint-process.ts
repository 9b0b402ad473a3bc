/**
 * The tests' local Web Push service (test/support/push-endpoint.ts: VAPID checked, aes128gcm
 * decrypted) in a process of its own, for the messaging bench's case (d): a push service is
 * another machine, so its decrypting must not share the sender's event loop. Forked with an IPC
 * channel (`PushEndpointProcess` below is the bench's side); it answers requests by `id`:
 *
 * - `{op: 'subscriptions', names}` → `{subscriptions}`: one browser-shaped subscription per name;
 * - `{op: 'counts'}` → `{received, rejected, statuses}`: pushes that passed every check, and the
 *   refused ones by status;
 * - `{op: 'clear'}` → `{}`: forgets what was received and refused.
 *
 * Prints nothing; sends `{ready: true, origin}` once listening.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestSubscription } from '../../test/support/push-endpoint.js';

type Request = { id: number; op: 'subscriptions'; names: string[] } | { id: number; op: 'counts' } | { id: number; op: 'clear' };

export interface PushCounts {
  received: number;
  rejected: number;
  statuses: Record<string, number>;
}

async function serve(): Promise<void> {
  const { PushEndpoint } = await import('../../test/support/push-endpoint.js');
  const push = await PushEndpoint.start();
  process.on('message', (req: Request) => {
    if (req.op === 'subscriptions') process.send!({ id: req.id, subscriptions: req.names.map((n) => push.subscription(n)) });
    else if (req.op === 'counts') {
      const statuses: Record<string, number> = {};
      for (const r of push.rejected) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      process.send!({ id: req.id, received: push.received.length, rejected: push.rejected.length, statuses });
    } else if (req.op === 'clear') {
      push.clear();
      process.send!({ id: req.id });
    }
  });
  process.once('disconnect', () => void push.stop().then(() => process.exit(0)));
  process.send!({ ready: true, origin: push.origin });
}

/** The bench's side: forks the endpoint process and asks it over IPC. */
export class PushEndpointProcess {
  #next = 0;
  #pending = new Map<number, (reply: any) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly origin: string,
  ) {
    child.on('message', (reply: { id?: number }) => {
      if (reply.id === undefined) return;
      this.#pending.get(reply.id)?.(reply);
      this.#pending.delete(reply.id);
    });
  }

  static async start(): Promise<PushEndpointProcess> {
    const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('push endpoint process did not start within 30 s')), 30_000);
      child.once('message', (m: { ready?: boolean; origin?: string }) => {
        clearTimeout(timer);
        if (m.ready && m.origin) resolve(m.origin);
        else reject(new Error(`push endpoint process said ${JSON.stringify(m)}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`push endpoint process exited with ${code}`));
      });
    });
    return new PushEndpointProcess(child, origin);
  }

  #ask<T>(req: Record<string, unknown>): Promise<T> {
    const id = ++this.#next;
    return new Promise<T>((resolve) => {
      this.#pending.set(id, resolve);
      this.child.send({ ...req, id });
    });
  }

  subscriptions(names: readonly string[]): Promise<TestSubscription[]> {
    return this.#ask<{ subscriptions: TestSubscription[] }>({ op: 'subscriptions', names }).then((r) => r.subscriptions);
  }

  counts(): Promise<PushCounts> {
    return this.#ask<PushCounts>({ op: 'counts' });
  }

  async clear(): Promise<void> {
    await this.#ask({ op: 'clear' });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }
}

if (process.argv.includes('--serve') && process.send) await serve();
