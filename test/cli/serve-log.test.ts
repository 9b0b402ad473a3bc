/**
 * A real `fieldforge serve` (bin/fieldforge.js) on the PostgreSQL server, without FF_DEV and with
 * no log settings, as an operator starts it: a 500 — an add-on's API method throwing a plain
 * Error — answers `{detail: 'Internal server error', error: 'InternalError'}` and nothing more,
 * while the server's standard output gets one JSON line with the request id, route, database and
 * the stack. Before issue 10 the operator saw only the start banner. The add-on lives in a bare
 * temporary directory (no package.json above it), loaded by the server process itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { waitForChild } from '../support/child-output.js';
import { freePort } from '../support/redis-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const PROBE_MODELS = `
import { Model, fields } from 'fieldforge';

export class ServeProbe extends Model {
  static override _api_methods = ['crash'];
  static override fields = { name: fields.Char() };
  static async crash(): Promise<never> {
    throw new Error('serve probe exploded: /srv/internal/path');
  }
}
`;

let t: TestDatabase;
let probeRoot: string;
let dataDir: string;
let child: ChildProcess | undefined;
let output = '';
let port: number;

const waitFor = (what: () => boolean, label: string, ms?: number) => waitForChild(() => child, () => output, what, label, ms);

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-serve-probe-'));
  dataDir = await mkdtemp(join(tmpdir(), 'ff-serve-data-'));
  await writeProbeModule(probeRoot, 'serve_probe', { 'models/index.ts': PROBE_MODELS, 'security/access.yaml': adminAccessYaml(['ServeProbe']) });
  t = await testDatabase('core', [probeRoot]);
  await t.platform.install(t.name, { init: ['serve_probe'] });
  port = await freePort();
  const { FF_DEV: _dev, FF_LOG_LEVEL: _level, FF_LOG_FORMAT: _format, ...inherited } = process.env;
  child = spawn(process.execPath, ['bin/fieldforge.js', 'serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT,
    env: { ...inherited, DATABASE_URL: TEST_DATABASE_URL, FF_ADDONS_PATH: probeRoot, FF_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await waitFor(() => /serving on http:\/\//.test(output), 'the "serving" line');
});
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await t?.close();
  for (const dir of [probeRoot, dataDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

/** The JSON lines of the server's output (the banner and warnings are plain text). */
function jsonLines(): Record<string, any>[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, any>];
    } catch {
      return [];
    }
  });
}

describe('fieldforge serve without FF_DEV', () => {
  it('logs a 500 with its request id and stack while the answer stays free of internals', async () => {
    const requestId = `probe-${Date.now()}`;
    const res = await fetch(`http://127.0.0.1:${port}/api/execute/ServeProbe/crash`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json', 'x-request-id': requestId },
      body: '{}',
    });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBe(requestId);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ detail: 'Internal server error', error: 'InternalError' });
    expect(body).not.toContain('exploded');

    await waitFor(() => jsonLines().some((l) => l.reqId === requestId), 'the 500 log line', 10_000);
    const lines = jsonLines().filter((l) => l.reqId === requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50, status: 500, error: 'InternalError', method: 'POST', route: '/api/execute/:model/:method', db: t.name,
      caller: { uid: expect.any(Number), service_account: expect.any(Number) },
      err: { type: 'Error', message: 'serve probe exploded: /srv/internal/path' },
    });
    // The stack leads to the add-on's own file, in its bare directory.
    expect(lines[0]!.err.stack).toContain(join(probeRoot, 'serve_probe', 'models', 'index.ts'));
    // At the default level (info) the access lines are not written.
    expect(jsonLines().some((l) => l.msg === 'request completed')).toBe(false);
  });

  it('prints the address to open in a browser once, and that address leads to the sign-in page', async () => {
    await waitFor(() => /Open http:\/\/\S+\/web in a browser/.test(output), 'the "Open … /web" line', 10_000);
    const lines = output.split('\n').filter((l) => l.startsWith('Open '));
    expect(lines).toEqual([`Open http://127.0.0.1:${port}/web in a browser to sign in.`]);
    // Signed out, the printed address sends the browser to sign in.
    const res = await fetch(`http://127.0.0.1:${port}/web`, { redirect: 'manual', headers: { 'x-db-name': t.name } });
    expect([200, 302, 303]).toContain(res.status);
    const page = res.status === 200 ? await res.text() : '';
    if (res.status !== 200) expect(res.headers.get('location')).toMatch(/^\/web\/login/);
    else expect(page).toContain('<script type="module"');
  });

  it('answers every request with an X-Request-Id, its own when the proxy sent none', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the printed address', () => {
  it('is one a person can open: a wildcard listen address becomes the loopback one', async () => {
    const { browserUrl } = await import('../../src/cli/serve.js');
    expect(browserUrl('0.0.0.0', 8000)).toBe('http://127.0.0.1:8000');
    expect(browserUrl('::', 8000)).toBe('http://[::1]:8000');
    expect(browserUrl('127.0.0.1', 8069)).toBe('http://127.0.0.1:8069');
    expect(browserUrl('fe80::1', 8000)).toBe('http://[fe80::1]:8000');
    expect(browserUrl('erp.example.com', 443)).toBe('http://erp.example.com:443');
  });
});
