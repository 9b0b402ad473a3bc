/**
 * The database's VAPID keys (`PushKey`): generated once with `web-push` at install, read before
 * each drain. `subject` is the contact push services may write to about this server's pushes
 * (RFC 8292 `sub`): `FF_PUSH_SUBJECT`, a `mailto:` or `https:` URL.
 */
import webpush from 'web-push';
import { QuerySet, currentEnv, withEnv } from 'fieldforge';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  subject: string;
}

export const DEFAULT_SUBJECT = 'mailto:push@fieldforge.invalid';

function keys(): QuerySet {
  return new QuerySet(currentEnv().registry.meta('PushKey'));
}

export async function ensureVapidKeys(): Promise<void> {
  await withEnv({ su: true }, async () => {
    if (await keys().exists()) return;
    const { publicKey, privateKey } = webpush.generateVAPIDKeys();
    await currentEnv().registry.meta('PushKey').cls.create({ public_key: publicKey, private_key: privateKey });
  });
}

export async function vapidKeys(): Promise<VapidKeys | null> {
  const [row] = await withEnv({ su: true }, () => keys().order_by('id ASC').limit(1).read(['public_key', 'private_key']));
  if (!row) return null;
  return { publicKey: row.public_key as string, privateKey: row.private_key as string, subject: process.env.FF_PUSH_SUBJECT || DEFAULT_SUBJECT };
}
