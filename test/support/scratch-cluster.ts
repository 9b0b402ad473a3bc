/**
 * A PostgreSQL cluster of the test's own, on a free port in a temporary directory (Debian's
 * `initdb` and `pg_ctl`, trust authentication, user `postgres`), for tests that stop, restart or
 * break the server — which the shared test server must never be. As root the commands run as the
 * `postgres` user (PostgreSQL refuses to run as root).
 */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class ScratchCluster {
  private constructor(
    readonly dir: string,
    readonly port: number,
    /** Server settings given with `-c` at every start (`max_connections`, …). */
    readonly settings: Readonly<Record<string, string | number>>,
  ) {}

  /** Creates and starts a cluster (about two seconds), with server `settings` (`{max_connections: 12}`). */
  static async start(settings: Readonly<Record<string, string | number>> = {}): Promise<ScratchCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'ff-cluster-'));
    if (isRoot()) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    const cluster = new ScratchCluster(dir, await freePort(), settings);
    await cluster.#pg('initdb', ['-D', cluster.#data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await cluster.startServer();
    return cluster;
  }

  /** The URL of the maintenance database (`postgres`). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get #data(): string {
    return join(this.dir, 'data');
  }

  /** Starts the server and waits until it accepts connections. */
  async startServer(): Promise<void> {
    // The socket directory is ours too: the server needs no system directory.
    const extra = Object.entries(this.settings).map(([k, v]) => ` -c ${k}=${v}`).join('');
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off${extra}`;
    await this.#pg('pg_ctl', ['-D', this.#data, '-l', join(this.dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
  }

  /** Stops the server (`fast`: sessions are terminated, transactions rolled back) and waits for it. */
  async stopServer(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.#pg('pg_ctl', ['-D', this.#data, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  /** `pg_ctl restart -m fast`: stops and starts again with the same options. */
  async restartServer(): Promise<void> {
    // With a log file of its own: the server must not keep pg_ctl's output pipe (and us) waiting.
    await this.#pg('pg_ctl', ['-D', this.#data, '-l', join(this.dir, 'log'), '-m', 'fast', '-w', '-t', '60', 'restart']);
  }

  /** Starts the server unless it runs (after a test that stopped it failed half-way). */
  async ensureRunning(): Promise<void> {
    const running = await this.#pg('pg_ctl', ['-D', this.#data, 'status']).then(() => true, () => false);
    if (!running) await this.startServer();
  }

  /** Stops the server if it runs and removes the cluster. */
  async destroy(): Promise<void> {
    await this.stopServer('immediate').catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }

  async #pg(command: 'initdb' | 'pg_ctl', args: string[]): Promise<void> {
    try {
      if (isRoot()) await run('runuser', ['-u', 'postgres', '--', command, ...args]);
      else await run(command, args);
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      throw new Error(`${command} ${args.join(' ')} failed: ${stderr || (error as Error).message}`);
    }
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** A port nobody listens on right now (the kernel's pick). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
