/**
 * Creating, cloning and dropping FieldForge databases as a whole: a new database gets `core`
 * (plus the requested modules), a first company and an administrator; if any step fails the
 * half-made database is dropped again.
 */
import { BadRequest, ValidationError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import { createRecords } from '../orm/write/create-records.js';
import { QuerySet } from '../orm/queryset.js';
import { checkPasswordRule } from '../auth/password-rule.js';
import { generatePassword, hashPassword } from '../auth/passwords.js';
import { assertValidDatabaseName } from '../db/database-name.js';
import { ensurePlatformState } from '../db/platform-state.js';
import { cloneOnEngine } from './clone-database.js';
import type { Platform } from './platform.js';

export interface CreateDatabaseOptions {
  modules?: readonly string[];
  adminEmail?: string;
  /** Generated when absent; either way it must pass the password rule (`auth/password-rule.ts`). */
  adminPassword?: string;
  companyName?: string;
  /** ISO 4217 code of the first company's currency (default USD); setting it activates it. */
  currency?: string;
}

export interface CreatedDatabase {
  name: string;
  adminEmail: string;
  adminPassword: string;
  installed: string[];
}

export async function createDatabase(platform: Platform, name: string, options: CreateDatabaseOptions = {}): Promise<CreatedDatabase> {
  assertValidDatabaseName(name);
  const adminEmail = options.adminEmail ?? 'admin@example.com';
  if (!/^[^@\s]+@[^@\s]+$/.test(adminEmail)) throw new BadRequest(`'${adminEmail}' is not an e-mail address`);
  const adminPassword = options.adminPassword ?? generatePassword();
  // The API's password rule, before anything is created: `db create --admin-password`,
  // FF_ADMIN_PASSWORD and the generated password are held to what `User.password` demands.
  try {
    checkPasswordRule(adminPassword, adminEmail);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(`The administrator password is refused: ${err.message}`);
    throw err;
  }
  const currencyCode = (options.currency ?? 'USD').trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currencyCode)) throw new BadRequest(`'${options.currency}' is not a currency code (ISO 4217, e.g. EUR)`);
  await platform.engine.create(name);
  try {
    const db = await platform.database(name);
    await ensurePlatformState(db.executor);
    const { installed } = await platform.install(name, { init: ['core', ...(options.modules ?? [])] });
    const passwordHash = await hashPassword(adminPassword);
    await platform.run(name, {}, async () => {
      const { registry } = currentEnv();
      // Currencies are seeded inactive: look the code up among all of them.
      const [currency] = await new QuerySet(registry.meta('Currency')).with_archived().filter({ name: currencyCode }).ids();
      if (currency === undefined) throw new BadRequest(`Unknown currency code '${currencyCode}' (ISO 4217, e.g. EUR)`);
      const [company] = await createRecords(registry.meta('Company'), [{ name: options.companyName ?? 'My Company', currency }]);
      await createRecords(registry.meta('Settings'), [{ company: company!.id }]);
      const groups = await new QuerySet(registry.meta('Group'))
        .filter({ identifier__in: ['core.group_admin', 'core.group_user'] }).ids();
      await createRecords(registry.meta('User'), [{
        name: 'Administrator', email: adminEmail, password_hash: passwordHash, company: company!.id,
        companies: [company!.id], groups, identifier: 'core.user_admin',
      }]);
    });
    return { name, adminEmail, adminPassword, installed };
  } catch (err) {
    platform.forget(name);
    await platform.engine.drop(name).catch(() => undefined);
    throw err;
  }
}

export async function dropDatabase(platform: Platform, name: string): Promise<void> {
  platform.forget(name);
  await platform.engine.drop(assertValidDatabaseName(name));
}

export async function cloneDatabase(platform: Platform, source: string, target: string): Promise<void> {
  await cloneOnEngine(platform.engine, platform.files, source, target);
}
