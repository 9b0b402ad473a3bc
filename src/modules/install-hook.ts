/**
 * Work a module does once its data is loaded, each time it is installed or upgraded, in the
 * install's transaction and as the platform: what no data file expresses (the messaging module
 * gives every existing user a contact, generates the database's Web Push keys and creates its
 * partial indexes). It must be idempotent: an upgrade runs it again.
 *
 * ```ts
 * export const install = defineInstallHook(async () => { … });
 * ```
 */
export interface InstallHook {
  readonly kind: 'install-hook';
  readonly run: () => Promise<void>;
}

export function defineInstallHook(run: () => Promise<void>): InstallHook {
  return { kind: 'install-hook', run };
}

export function isInstallHook(value: unknown): value is InstallHook {
  return typeof value === 'object' && value !== null && (value as InstallHook).kind === 'install-hook';
}
