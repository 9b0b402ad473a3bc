/**
 * Who the caller is, for the web client's shell (`GET /auth/me`): the user's name, e-mail,
 * language preference, groups (qualified identifiers), company and second-factor state, plus the
 * language the caller actually gets (the preference when it names an active language, else
 * `Accept-Language`, else `en`; with its writing direction) and the database. Read as the
 * platform: a user may always see these facts about themself, whatever their rights on `User`.
 */
import { callerLanguageRow } from '../i18n/translations.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';

export const ADMIN_GROUP = 'core.group_admin';

export interface SessionUser {
  id: number;
  name: string;
  email: string | null;
  /** The user's own preference (`User.lang`); null = none. */
  lang: string | null;
  is_admin: boolean;
  groups: string[];
  company: { id: number; name: string } | null;
  totp_enabled: boolean;
  /** The language the caller gets and its direction (`ltr`/`rtl`). */
  language: { code: string; direction: string };
  db: string;
}

export async function describeSessionUser(dbName: string, language: { acceptLanguage?: string | null } = {}): Promise<SessionUser> {
  const { uid, registry } = currentEnv();
  const userMeta = registry.meta('User');
  const [user] = await withEnv({ su: true }, () => new QuerySet(userMeta).with_archived().filter({ id: uid })
    .read(['name', 'email', 'lang', 'totp_enabled', 'company.name', 'groups.identifier']));
  if (!user) throw new Error(`The signed-in user ${uid} has no User record`);
  const groups = ((user.groups as { identifier?: string | null }[] | null) ?? [])
    .map((g) => g.identifier).filter((g): g is string => typeof g === 'string').sort();
  const company = user.company as { id: number; name: string } | null;
  const row = await callerLanguageRow({ acceptLanguage: language.acceptLanguage ?? null }, registry.has('Language') ? ['direction'] : []);
  return {
    id: user.id as number,
    name: user.name as string,
    email: (user.email as string | null) ?? null,
    lang: (user.lang as string | null) || null,
    is_admin: groups.includes(ADMIN_GROUP),
    groups,
    company: company ? { id: company.id, name: company.name } : null,
    totp_enabled: Boolean(user.totp_enabled),
    language: { code: (row?.code as string | undefined) ?? 'en', direction: row?.direction === 'rtl' ? 'rtl' : 'ltr' },
    db: dbName,
  };
}
