/**
 * The platform secret (`FF_SECRET`): signs session tokens, ALTCHA challenges and file URLs. Without
 * the variable it is generated once into the data directory (mode 0600) so restarts keep sessions
 * valid; several hosts must share one through `FF_SECRET`. Each use derives its own key, so a key
 * leaked from one purpose forges nothing in another.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function resolveSecret(secret: string | undefined, dataDir: string): Promise<string> {
  if (secret) return secret;
  const file = join(dataDir, 'secret');
  await mkdir(dataDir, { recursive: true });
  // Written whole under a name of its own, then linked into place: `link` fails if the file exists,
  // so of several processes starting together one wins and the others read a complete secret
  // (a file created with `wx` and written afterwards could be read empty in between).
  const fresh = randomBytes(32).toString('base64url');
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(draft, fresh, { flag: 'wx', mode: 0o600 });
  try {
    await link(draft, file);
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const stored = (await readFile(file, 'utf8')).trim();
    if (!stored) throw new Error(`${file} is empty: delete it or set FF_SECRET`);
    return stored;
  } finally {
    await unlink(draft).catch(() => {});
  }
}

/** A key for one purpose (`'session-token'`, `'altcha'`, …), derived from the secret. */
export function purposeKey(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`fieldforge:${purpose}`).digest();
}
