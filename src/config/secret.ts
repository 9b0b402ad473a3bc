/**
 * The platform secret (`FF_SECRET`): signs session tokens, ALTCHA challenges and file URLs. Without
 * the variable it is generated once into the data directory (mode 0600) so restarts keep sessions
 * valid; several hosts must share one through `FF_SECRET`. Each use derives its own key, so a key
 * leaked from one purpose forges nothing in another.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function resolveSecret(secret: string | undefined, dataDir: string): Promise<string> {
  if (secret) return secret;
  const file = join(dataDir, 'secret');
  await mkdir(dataDir, { recursive: true });
  try {
    // `wx`: of two workers starting together, one writes and the other reads what it wrote.
    const fresh = randomBytes(32).toString('base64url');
    await writeFile(file, fresh, { flag: 'wx', mode: 0o600 });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const stored = (await readFile(file, 'utf8')).trim();
    if (!stored) throw new Error(`${file} is empty: delete it or set FF_SECRET`);
    return stored;
  }
}

/** A key for one purpose (`'session-token'`, `'altcha'`, …), derived from the secret. */
export function purposeKey(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`fieldforge:${purpose}`).digest();
}
