/**
 * A user's language (`User.lang`) and what it decides: the code must name an active language
 * (a `ValidationError` otherwise, on the API and the ORM), the caller's language is the first
 * active one of `inputs.lang` / context `lang` > the user's `lang` > `Accept-Language` > `en`
 * (labels, menus, `GET /api/get_registry`), and `Language.format_values` renders dates, times,
 * numbers and amounts the way that language writes them (French, Arabic).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Currency } from '../../modules/core/models/currency.js';
import { Group } from '../../modules/core/models/group.js';
import { Language } from '../../modules/core/models/language.js';
import { User } from '../../modules/core/models/user.js';
import { openSession } from '../../src/auth/sessions.js';
import { ValidationError } from '../../src/errors.js';
import { callerFormat, languageFormatOf } from '../../src/i18n/locale.js';
import { callerLanguage } from '../../src/i18n/translations.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const NNBSP = '\u202f';
const NBSP = '\u00a0';
const RLM = '\u200f';
const RLI = '\u2067';
const PDI = '\u2069';

let t: TestDatabase;
let groupUser: number[];
/** Person users with a session each: `fr` (lang fr), `none` (no lang), `arabic` (ar-EG), `plainAr` (ar). */
const users = {} as Record<'fr' | 'none' | 'arabic' | 'plainAr', { id: number; token: string }>;

beforeAll(async () => {
  t = await testDatabase('core');
  for (const code of ['fr', 'ar', 'ar-EG']) await setActive(code, true);
  groupUser = await t.run(() => Group.query({ identifier: 'core.group_user' }).ids());
  const langs = { fr: 'fr', none: null, arabic: 'ar-EG', plainAr: 'ar' } as const;
  for (const [key, lang] of Object.entries(langs)) {
    users[key as keyof typeof users] = await t.run(async () => {
      const user = await User.create({ name: `User ${key}`, email: `${key}@example.test`, groups: groupUser, lang });
      const tokens = await openSession(user.id, { dbName: t.name, secret: t.platform.secret, sessionHours: 1 });
      return { id: user.id, token: tokens.access_token };
    });
  }
});
afterAll(async () => {
  await t?.close();
});

async function setActive(code: string, active: boolean): Promise<void> {
  const id = await t.run(async () => (await Language.query({ code }).with_archived().first())!.id);
  const res = await t.api('PUT', `/api/update/Language/${id}`, { active });
  expect(res.statusCode, res.body).toBe(200);
}

const bearer = (who: keyof typeof users) => ({ authorization: `Bearer ${users[who].token}` });

async function execute(who: keyof typeof users, method: string, inputs: Record<string, unknown> = {}, context: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const res = await t.api('POST', `/api/execute/Language/${method}`, { request_body: { inputs, context } }, { ...bearer(who), ...headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().result;
}

/** The language, Currency.symbol label and settings menu name a user gets from `get_registry` and `get_menus`. */
async function seenBy(who: keyof typeof users, options: { inputs?: Record<string, unknown>; context?: Record<string, unknown>; acceptLanguage?: string } = {}) {
  const headers: Record<string, string> = options.acceptLanguage ? { 'accept-language': options.acceptLanguage } : {};
  const registry = await execute(who, 'get_registry', { model: 'Currency', ...options.inputs }, options.context, headers);
  const menus = await execute(who, 'get_menus', { ...options.inputs }, options.context, headers);
  expect(menus.lang).toBe(registry.lang);
  const settings = menus.menus.find((m: any) => m.identifier === 'core.menu_settings_users');
  return { lang: registry.lang as string, symbol: registry.fields.symbol.label as string, menu: settings?.name as string };
}

async function setLang(id: number, lang: unknown) {
  return t.api('PUT', `/api/update/User/${id}`, { lang });
}

describe('User.lang', () => {
  it('accepts the code of an active language, or null (the source language)', async () => {
    const created = await t.api('POST', '/api/create/User', { name: 'Lang ok', lang: 'ar-EG' });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id;
    expect((await t.api('POST', `/api/fetch/User/${id}`, { fields: ['lang'] })).json().lang).toBe('ar-EG');
    expect((await setLang(id, 'fr')).statusCode).toBe(200);
    expect((await setLang(id, null)).statusCode).toBe(200);
    expect((await t.api('POST', `/api/fetch/User/${id}`, { fields: ['lang'] })).json().lang).toBeNull();
    const registry = (await t.api('GET', '/api/get_registry/User')).json();
    expect(registry.lang).toMatchObject({ type: 'Char', max_length: 10, label: 'Language' });
  });

  it('refuses an inactive, unknown or misspelt code with a ValidationError (400) naming it, writing nothing', async () => {
    for (const lang of ['de', 'xx', 'FR', 'fr_FR', '', 'fr-CA']) {
      const res = await t.api('POST', '/api/create/User', { name: `Lang ${lang}`, lang });
      expect(res.statusCode, `${lang}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({
        error: 'ValidationError',
        detail: `"${lang}" is not an active language: a user's language (lang) must be the code of an active Language (ar, ar-EG, en, fr), or empty for en`,
      });
    }
    expect(await t.run(() => User.query({ name__in: ['Lang de', 'Lang xx', 'Lang '] }).with_archived().count())).toBe(0);
    const res = await setLang(users.none.id, 'de');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('ValidationError');
    expect((await t.api('POST', `/api/fetch/User/${users.none.id}`, { fields: ['lang'] })).json().lang).toBeNull();
  });

  it('refuses through the ORM as well: create, record write and queryset update', async () => {
    const failures = [
      await t.failure(() => User.create({ name: 'ORM lang', lang: 'de' })),
      await t.failure(async () => (await User.query({ id: users.none.id }).first())!.write({ lang: 'it' })),
      await t.failure(() => User.query({ id__in: [users.none.id, users.fr.id] }).update({ lang: 'es' })),
      await t.failure(() => User.query({ id: users.none.id }).update({ lang: 42 })),
    ];
    for (const err of failures) {
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toMatch(/is not an active language/);
    }
  });

  it('keeps a language deactivated later on its users (a write of the same value passes), refuses it to anyone else', async () => {
    await setActive('ar', false);
    try {
      expect((await setLang(users.plainAr.id, 'ar')).statusCode).toBe(200);
      expect((await t.api('PUT', `/api/update/User/${users.plainAr.id}`, { name: 'User plainAr', lang: 'ar' })).statusCode).toBe(200);
      const other = await setLang(users.none.id, 'ar');
      expect(other.statusCode).toBe(400);
      expect(other.json().detail).toMatch(/^"ar" is not an active language/);
      // Both at once: one of them does not have it yet.
      const both = await t.failure(() => User.query({ id__in: [users.plainAr.id, users.none.id] }).update({ lang: 'ar' }));
      expect(both).toBeInstanceOf(ValidationError);
    } finally {
      await setActive('ar', true);
    }
  });
});

describe('User.set_my_language', () => {
  it('lets a user without any right to write users choose their own language, checked like any write', async () => {
    const self = users.none;
    const call = (lang: unknown) => t.api('POST', '/api/execute/User/set_my_language', { request_body: { inputs: { lang } } }, bearer('none'));
    // The same user may not write User records directly.
    expect((await t.api('PUT', `/api/update/User/${self.id}`, { lang: 'fr' }, bearer('none'))).statusCode).toBe(403);
    const bad = await call('xx');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'ValidationError' });
    const ok = await call('fr');
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await t.run(async () => (await User.get(self.id)).lang)).toBe('fr');
    expect(await execute('none', 'get_menus')).toMatchObject({ lang: 'fr' });
    expect((await call(null)).statusCode).toBe(200);
    expect(await t.run(async () => (await User.get(self.id)).lang)).toBeNull();
    // Only the caller's own user: others stay as they were.
    expect(await t.run(async () => (await User.get(users.fr.id)).lang)).toBe('fr');
  });
});

describe("the caller's language", () => {
  it('a user on fr gets French labels and menu names from i18n/fr.yaml without any header or context', async () => {
    expect(await seenBy('fr')).toEqual({ lang: 'fr', symbol: 'Symbole', menu: 'Utilisateurs' });
    expect(await seenBy('none')).toEqual({ lang: 'en', symbol: 'Symbol', menu: 'Users' });
    const registry = await t.api('GET', '/api/get_registry/Currency', undefined, bearer('fr'));
    expect(registry.statusCode, registry.body).toBe(200);
    expect(registry.json().symbol.label).toBe('Symbole');
    expect(registry.json().position.choices).toEqual([['Before', 'Avant le montant'], ['After', 'Après le montant']]);
  });

  it('goes: inputs.lang, then context lang, then the user, then Accept-Language, then en — active languages only', async () => {
    // The context wins over the user; an explicit input over the context.
    expect((await seenBy('fr', { context: { lang: 'ar' } })).lang).toBe('ar');
    expect((await seenBy('fr', { inputs: { lang: 'en' }, context: { lang: 'ar' } })).lang).toBe('en');
    // The user wins over the header.
    expect(await seenBy('fr', { acceptLanguage: 'ar-EG, ar;q=0.9' })).toEqual({ lang: 'fr', symbol: 'Symbole', menu: 'Utilisateurs' });
    expect((await seenBy('arabic', { acceptLanguage: 'fr' })).lang).toBe('ar-EG');
    // Without a user language, the header counts (by quality, regional → base), then en.
    expect((await seenBy('none', { acceptLanguage: 'de-CH, fr;q=0.8' })).lang).toBe('fr');
    expect((await seenBy('none', { acceptLanguage: 'fr-BE' })).lang).toBe('fr');
    expect((await seenBy('none', { acceptLanguage: 'de, it' })).lang).toBe('en');
    // An inactive explicit language does not count: the next preference does.
    expect((await seenBy('fr', { context: { lang: 'de' } })).lang).toBe('fr');
    expect((await seenBy('none', { context: { lang: 'de' }, acceptLanguage: 'ar' })).lang).toBe('ar');
    // GET /api/get_registry: the user's language over the header.
    const get = (who: keyof typeof users, header: string) =>
      t.api('GET', '/api/get_registry/Currency', undefined, { ...bearer(who), 'accept-language': header }).then((r) => r.json().symbol.label);
    expect(await get('fr', 'ar')).toBe('Symbole');
    expect(await get('none', 'fr')).toBe('Symbole');
    expect(await get('arabic', 'fr')).toBe('الرمز المختصر');
  });

  it('falls back to en when the user language is deactivated (or to the header, when that one is active)', async () => {
    await setActive('fr', false);
    try {
      expect(await seenBy('fr')).toEqual({ lang: 'en', symbol: 'Symbol', menu: 'Users' });
      expect((await seenBy('fr', { acceptLanguage: 'ar-EG' })).lang).toBe('ar-EG');
      expect((await t.api('GET', '/api/get_registry/Currency', undefined, bearer('fr'))).json().symbol.label).toBe('Symbol');
      expect((await execute('fr', 'format_values', { values: [{ type: 'number', value: 1234.5, digits: 2 }] })))
        .toMatchObject({ lang: 'en', values: ['1,234.50'] });
    } finally {
      await setActive('fr', true);
    }
    expect((await seenBy('fr')).lang).toBe('fr');
  });

  it('resolves in model code too (callerLanguage, callerFormat, languageFormatOf), for the acting user', async () => {
    expect(await t.run(() => callerLanguage(), { uid: users.fr.id })).toBe('fr');
    expect(await t.run(() => callerLanguage({ acceptLanguage: 'ar' }), { uid: users.none.id })).toBe('ar');
    expect(await t.run(() => callerLanguage({ acceptLanguage: 'ar' }), { uid: users.fr.id })).toBe('fr');
    expect(await t.run(() => callerLanguage({ context: { lang: 'ar-EG' } }), { uid: users.fr.id })).toBe('ar-EG');
    expect(await t.run(() => callerLanguage())).toBe('en');
    const format = await t.run(() => callerFormat(), { uid: users.arabic.id });
    const de = await t.run(() => languageFormatOf('de'));
    expect(format).toMatchObject({ code: 'ar-EG', direction: 'rtl', decimal_separator: '\u066b', thousands_separator: '\u066c' });
    // Any row, active or not.
    expect(de).toEqual({ code: 'de', direction: 'ltr', date_format: 'DD.MM.YYYY', time_format: 'HH:mm', decimal_separator: ',', thousands_separator: '.' });
    expect((await t.run(() => languageFormatOf('no-such'))).code).toBe('en');
  });

  it('costs routes that translate nothing no query, and a translating route one more only without an explicit language', async () => {
    // Warm the session so that the credential check rides in the first statement.
    await t.api('POST', '/api/query/Currency', { limit: 1 }, bearer('fr'));
    const plain = await t.countStatements(() => t.api('POST', '/api/query/Currency', { limit: 1 }, bearer('fr')));
    expect(plain.statements.join('\n')).not.toMatch(/"lang"|language/);
    const count = (context: Record<string, unknown>) =>
      t.countStatements(() => execute('fr', 'format_values', { values: [] }, context)).then((c) => c.statements.filter((s) => /"lang"|"language"/.test(s)));
    expect(await count({ lang: 'ar' })).toHaveLength(1);
    expect(await count({})).toHaveLength(2);
  });
});

describe('Language.format_values', () => {
  const values = [
    { type: 'date', value: '2024-03-09' },
    { type: 'time', value: '2024-03-09T16:05:00Z' },
    { type: 'datetime', value: '2024-03-09T16:05:00Z' },
    { type: 'number', value: 1234567.891, digits: 2 },
    { type: 'number', value: '-0.5' },
    { type: 'monetary', value: 1234.56, currency: 'EUR' },
    { type: 'monetary', value: -1234.567, currency: 'USD' },
  ];

  it('renders a French user the French way: day first, 24 h, narrow no-break spaces, € after', async () => {
    const eur = await t.run(async () => (await Currency.query({ name: 'EUR' }).with_archived().first())!.id);
    const result = await execute('fr', 'format_values', { values: [...values, { type: 'monetary', value: 9.999, currency: eur }], tz: 'Europe/Paris' });
    expect(result).toEqual({
      lang: 'fr', direction: 'ltr', date_format: 'DD/MM/YYYY', time_format: 'HH:mm', decimal_separator: ',', thousands_separator: NNBSP,
      values: [
        '09/03/2024', '17:05', '09/03/2024 17:05',
        `1${NNBSP}234${NNBSP}567,89`, '-0,5',
        `1${NNBSP}234,56${NBSP}€`, `-$1${NNBSP}234,57`, `10,00${NBSP}€`,
      ],
    });
    // As ICU itself writes a euro amount in French.
    expect(result.values[5]).toBe(new Intl.NumberFormat('fr', { style: 'currency', currency: 'EUR' }).formatToParts(1234.56).map((p) => p.value).join(''));
  });

  it('renders an Arabic (ar-EG) user right to left, in Arabic digits, with ٫ and ٬ as CLDR says', async () => {
    const result = await execute('arabic', 'format_values', { values });
    expect(result).toMatchObject({ lang: 'ar-EG', direction: 'rtl', decimal_separator: '٫', thousands_separator: '٬' });
    expect(result.values).toEqual([
      `${RLI}٠٩${RLM}/٠٣${RLM}/٢٠٢٤${PDI}`,
      `${RLI}٤:٠٥ م${PDI}`,
      `${RLI}٠٩${RLM}/٠٣${RLM}/٢٠٢٤ ٤:٠٥ م${PDI}`,
      `${RLI}١٬٢٣٤٬٥٦٧٫٨٩${PDI}`,
      `${RLI}\u061c-٠٫٥${PDI}`,
      `${RLI}١٬٢٣٤٫٥٦${NBSP}€${PDI}`,
      `${RLI}\u061c-$١٬٢٣٤٫٥٧${PDI}`,
    ]);
  });

  it('renders plain ar right to left with the Latin digits and separators CLDR 48 gives it', async () => {
    const result = await execute('plainAr', 'format_values', { values: values.slice(0, 4) });
    expect(result).toMatchObject({ lang: 'ar', direction: 'rtl', decimal_separator: '.', thousands_separator: ',' });
    expect(result.values).toEqual([`${RLI}09${RLM}/03${RLM}/2024${PDI}`, `${RLI}4:05 م${PDI}`, `${RLI}09${RLM}/03${RLM}/2024 4:05 م${PDI}`, `${RLI}1,234,567.89${PDI}`]);
  });

  it('answers in en for a caller without a language, and in the language asked for', async () => {
    const res = await t.api('POST', '/api/execute/Language/format_values', { request_body: { inputs: { values: values.slice(3, 7) } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toMatchObject({ lang: 'en', direction: 'ltr', values: ['1,234,567.89', '-0.5', `1,234.56${NBSP}€`, '-$1,234.57'] });
    expect((await execute('none', 'format_values', { values: values.slice(0, 1), lang: 'fr' })).values).toEqual(['09/03/2024']);
  });

  it('refuses malformed values with a 400 naming the entry', async () => {
    const cases: [unknown, unknown, RegExp][] = [
      [undefined, undefined, /'values' must be a list/],
      [[{ type: 'colour', value: 'red' }], undefined, /values\[0\]\.type must be one of/],
      [[{ type: 'date', value: 'yesterday' }], undefined, /values\[0\]: "yesterday" is not a date/],
      [[{ type: 'number', value: 'NaN' }], undefined, /values\[0\]\.value must be a finite number/],
      [[{ type: 'number', value: 1, digits: 99 }], undefined, /digits must be an integer from 0 to 20/],
      [[{ type: 'monetary', value: 1 }], undefined, /values\[0\]\.currency must be a Currency id/],
      [[{ type: 'number', value: 1 }, { type: 'monetary', value: 1, currency: 'ZZZ' }], undefined, /values\[1\]: currency "ZZZ" does not exist/],
      [[], 'Mars/Olympus', /'tz' must be an IANA time zone/],
    ];
    for (const [entries, tz, detail] of cases) {
      const res = await t.api('POST', '/api/execute/Language/format_values', { request_body: { inputs: { values: entries, tz } } }, bearer('fr'));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail).toMatch(detail);
    }
  });
});
