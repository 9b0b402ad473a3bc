/** The generated platform secret: processes starting together all get the one complete secret. */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveSecret } from '../../src/config/secret.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('resolveSecret', () => {
  it('gives 50 concurrent starts one non-empty secret, stored 0600, with no draft left behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ff-secret-'));
    dirs.push(dir);
    const secrets = await Promise.all(Array.from({ length: 50 }, () => resolveSecret(undefined, dir)));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]!.length).toBeGreaterThanOrEqual(40);
    expect((await readFile(join(dir, 'secret'), 'utf8')).trim()).toBe(secrets[0]);
    expect((await stat(join(dir, 'secret'))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['secret']);
  });

  it('prefers FF_SECRET when set', async () => {
    expect(await resolveSecret('given', '/nonexistent/never-created')).toBe('given');
  });
});
