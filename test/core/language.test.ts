/**
 * Languages (spec §2.5): the seed derived from ICU/CLDR, `en` as the unmodifiable source language
 * (refused on every path, nothing changed), activation loading the modules' `i18n/<code>.yaml`
 * files (labels, choices and menus in the caller's language, idempotent on reactivation), and the
 * formatting helpers for dates, times, numbers and amounts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Currency } from '../../modules/core/models/currency.js';
import { Language, Translation } from '../../modules/core/models/language.js';
import { LANGUAGE_CODES } from '../../modules/core/data/languages.js';
import { UserError } from '../../src/errors.js';
import {
  PDI, RLI, formatDate, formatDatetime, formatMonetary, formatNumber, formatTime, stripIsolate,
  type CurrencyFormat, type LanguageFormat,
} from '../../src/i18n/format.js';
import { parseTranslations } from '../../src/i18n/translation-files.js';
import { parseAcceptLanguage } from '../../src/i18n/translations.js';
import { BUILTIN_MODULES_DIR } from '../../src/modules/module-catalog.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const FORMAT_FIELDS = ['code', 'name', 'active', 'direction', 'date_format', 'time_format', 'decimal_separator', 'thousands_separator'] as const;
const NNBSP = '\u202f';
const NBSP = '\u00a0';
const RLM = '\u200f';

let t: TestDatabase;
const langs = {} as Record<string, LanguageFormat & { id: number; name: string; active: boolean }>;
const money = {} as Record<'USD' | 'EUR' | 'JPY' | 'CHF', CurrencyFormat>;

beforeAll(async () => {
  t = await testDatabase('core');
  await t.run(async () => {
    for (const row of await Language.query().with_archived().read(['id', ...FORMAT_FIELDS])) langs[row.code as string] = row as any;
    for (const code of ['USD', 'EUR', 'JPY', 'CHF'] as const) {
      money[code] = (await Currency.query({ name: code }).with_archived().read(['name', 'symbol', 'position', 'rounding']))[0] as any;
    }
  });
});
afterAll(async () => {
  await t?.close();
});

async function ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
  const res = await t.api(method, url, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const languageRow = (code: string) => t.run(async () => (await Language.query({ code }).with_archived().read([...FORMAT_FIELDS, 'updated_date']))[0]);
const setActive = (code: string, active: boolean) => ok('PUT', `/api/update/Language/${langs[code]!.id}`, { active });
const frRows = () => t.run(() => Translation.query({ lang: 'fr' }).order_by('key ASC').read(['key', 'value', 'module']));
const registryAs = (model: string, context: Record<string, unknown>) =>
  ok('POST', '/api/execute/Language/get_registry', { request_body: { inputs: { model }, context } }).then((r) => r.result);
const menusAs = async (context: Record<string, unknown>) => {
  const { result } = await ok('POST', '/api/execute/Language/get_menus', { request_body: { inputs: {}, context } });
  return { lang: result.lang as string, names: Object.fromEntries(result.menus.map((m: any) => [m.identifier, m.name])) as Record<string, string> };
};

describe('the seed', () => {
  it('holds the common locales ICU supports, each once, named in its own language, only en active', () => {
    const expected = LANGUAGE_CODES.filter((c) => Intl.DateTimeFormat.supportedLocalesOf(c).length);
    expect(expected.length).toBeGreaterThanOrEqual(60);
    expect(Object.keys(langs).sort()).toEqual([...expected].sort());
    expect(Object.values(langs).filter((l) => l.active).map((l) => l.code)).toEqual(['en']);
    expect(langs.en!.name).toBe('English');
    expect(langs.fr!.name).toBe('Français');
    expect(langs.de!.name).toBe('Deutsch');
    expect(langs.ar!.name).toBe('العربية');
    expect(langs.ja!.name).toBe('日本語');
    expect(langs['pt-BR']!.name).toBe('Português (Brasil)');
  });

  it('gives en US formats, and fr, de, ja their CLDR patterns and separators', () => {
    const pick = (code: string) => {
      const { direction, date_format, time_format, decimal_separator, thousands_separator } = langs[code]!;
      return { direction, date_format, time_format, decimal_separator, thousands_separator };
    };
    // CLDR separates the English day period with a narrow no-break space.
    expect(pick('en')).toEqual({ direction: 'ltr', date_format: 'MM/DD/YYYY', time_format: `h:mm${NNBSP}a`, decimal_separator: '.', thousands_separator: ',' });
    expect(pick('fr')).toEqual({ direction: 'ltr', date_format: 'DD/MM/YYYY', time_format: 'HH:mm', decimal_separator: ',', thousands_separator: NNBSP });
    expect(pick('de')).toEqual({ direction: 'ltr', date_format: 'DD.MM.YYYY', time_format: 'HH:mm', decimal_separator: ',', thousands_separator: '.' });
    expect(pick('ja')).toEqual({ direction: 'ltr', date_format: 'YYYY/MM/DD', time_format: 'H:mm', decimal_separator: '.', thousands_separator: ',' });
    expect(pick('ko').time_format).toBe('a h:mm');
    expect(pick('fr-CA').date_format).toBe('YYYY-MM-DD');
  });

  it('makes Arabic, Persian and Hebrew right-to-left, with the separators CLDR gives (٫ in ar-EG and fa)', () => {
    for (const code of ['ar', 'ar-EG', 'fa', 'he', 'ur']) expect(langs[code]!.direction, code).toBe('rtl');
    expect(Object.values(langs).filter((l) => l.direction === 'rtl').map((l) => l.code).sort()).toEqual(['ar', 'ar-EG', 'fa', 'he', 'ur']);
    // CLDR puts a right-to-left mark after each number of an Arabic date.
    expect(langs.ar!.date_format).toBe(`DD${RLM}/MM${RLM}/YYYY`);
    expect(langs.ar!.time_format).toBe('h:mm a');
    expect(langs['ar-EG']).toMatchObject({ decimal_separator: '\u066b', thousands_separator: '\u066c' });
    expect(langs.fa).toMatchObject({ decimal_separator: '\u066b', thousands_separator: '\u066c', date_format: 'YYYY/MM/DD' });
    // Every row's separators are what ICU says for its code (CLDR 48 gives plain `ar` Latin digits and `.`).
    for (const l of Object.values(langs)) {
      const parts = new Intl.NumberFormat(l.code).formatToParts(1234567.5);
      expect([l.decimal_separator, l.thousands_separator], l.code).toEqual([
        parts.find((p) => p.type === 'decimal')!.value, parts.find((p) => p.type === 'group')!.value,
      ]);
    }
  });
});

describe('en, the source language', () => {
  it('refuses an update and a delete through the API with a 400, changing nothing', async () => {
    const before = await languageRow('en');
    for (const body of [{ name: 'Anglais' }, { date_format: 'DD/MM/YYYY' }, { active: false }, { code: 'en-US' }]) {
      const res = await t.api('PUT', `/api/update/Language/${langs.en!.id}`, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error: 'UserError', detail: expect.stringMatching(/source language and cannot be modified/) });
    }
    const del = await t.api('DELETE', `/api/delete/Language/${langs.en!.id}`);
    expect(del.statusCode, del.body).toBe(400);
    expect(del.json()).toMatchObject({ error: 'UserError', detail: expect.stringMatching(/source language: it cannot be deleted/) });
    expect(await languageRow('en')).toEqual(before);
  });

  it('refuses through the ORM: a record write, a queryset update or delete that includes it, and unlink', async () => {
    const before = { en: await languageRow('en'), fr: await languageRow('fr') };
    const failures = [
      await t.failure(async () => (await Language.query({ code: 'en' }).first())!.write({ thousands_separator: ' ' })),
      await t.failure(() => Language.query({ code__in: ['fr', 'en'] }).with_archived().update({ name: 'X' })),
      await t.failure(() => Language.query({ code__in: ['fr', 'en'] }).with_archived().delete()),
      await t.failure(async () => (await Language.query({ code: 'en' }).first())!.unlink()),
    ];
    for (const err of failures) {
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).status).toBe(400);
    }
    expect(await languageRow('en')).toEqual(before.en);
    expect(await languageRow('fr')).toEqual(before.fr);
  });

  it('accepts a write of the values it already has (an upgrade re-writes the seed), and other languages stay editable', async () => {
    const en = await languageRow('en');
    await t.run(async () => {
      const record = (await Language.query({ code: 'en' }).first())!;
      await record.write({ name: en!.name, active: true, date_format: en!.date_format });
    });
    await ok('PUT', `/api/update/Language/${langs.de!.id}`, { thousands_separator: "'" });
    expect((await languageRow('de'))!.thousands_separator).toBe("'");
    await ok('PUT', `/api/update/Language/${langs.de!.id}`, { thousands_separator: '.' });
  });

  it('cannot be duplicated, and codes are BCP 47 tags of at most 10 characters', async () => {
    expect((await t.api('POST', '/api/create/Language', { code: 'en', name: 'English again' })).statusCode).toBe(400);
    for (const code of ['not a code', 'x-very-long-tag', '']) {
      const res = await t.api('POST', '/api/create/Language', { code, name: 'Bad' });
      expect(res.statusCode, `${code}: ${res.body}`).toBe(400);
    }
    const created = await ok('POST', '/api/create/Language', { code: 'tlh', name: 'Klingon' });
    expect(created.name).toBe('Klingon');
    await ok('DELETE', `/api/delete/Language/${created.id}`);
  });
});

describe('activation and translations', () => {
  it('serves English while fr is inactive, French labels, choices and menus once fr is activated', async () => {
    const english = await registryAs('Currency', { lang: 'fr' });
    expect(english.lang).toBe('en');
    expect(english.label).toBe('Currency');
    expect(english.fields.symbol.label).toBe('Symbol');
    expect(await frRows()).toEqual([]);

    await setActive('fr', true);
    const file = parseTranslations('core', await readFile(join(BUILTIN_MODULES_DIR, 'core', 'i18n', 'fr.yaml'), 'utf8'), 'fr.yaml');
    const rows = await frRows();
    expect(rows.map((r) => [r.key, r.value])).toEqual(file.map((e) => [e.key, e.value]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
    expect(rows.every((r) => r.module === 'core')).toBe(true);

    const french = await registryAs('Currency', { lang: 'fr' });
    expect(french.lang).toBe('fr');
    expect(french.label).toBe('Devise');
    expect(french.fields.symbol.label).toBe('Symbole');
    expect(french.fields.position.choices).toEqual([['Before', 'Avant le montant'], ['After', 'Après le montant']]);
    // Not translated: as declared.
    expect(french.fields.created_date.label).toBe(english.fields.created_date.label);
    // A regional variant falls back to its active base language; the default caller stays English.
    expect((await registryAs('Currency', { lang: 'fr-CA' })).fields.symbol.label).toBe('Symbole');
    expect((await registryAs('Currency', {})).fields.symbol.label).toBe('Symbol');

    const menus = await menusAs({ lang: 'fr' });
    expect(menus.lang).toBe('fr');
    expect(menus.names['core.menu_settings']).toBe('Paramètres');
    expect(menus.names['core.menu_settings_users']).toBe('Utilisateurs');
    expect((await menusAs({})).names['core.menu_settings']).toBe('Settings');
  });

  it('deactivating stops serving French; reactivating reloads the files without duplicating a row', async () => {
    const loaded = await frRows();
    expect(loaded.length).toBeGreaterThan(10);
    const ids = await t.run(async () => (await Translation.query({ lang: 'fr' }).all()).map((r) => r.id).sort());

    await setActive('fr', false);
    expect((await registryAs('Currency', { lang: 'fr' })).fields.symbol.label).toBe('Symbol');
    expect((await menusAs({ lang: 'fr' })).names['core.menu_settings']).toBe('Settings');

    // An edited text is put back by the next activation, as the file says.
    await t.run(async () => (await Translation.query({ lang: 'fr', key: 'field:Currency.symbol' }).first())!.write({ value: 'Sigle' }));
    await setActive('fr', true);
    await setActive('fr', true);
    expect(await frRows()).toEqual(loaded);
    expect(await t.run(async () => (await Translation.query({ lang: 'fr' }).all()).map((r) => r.id).sort())).toEqual(ids);
    expect((await registryAs('Currency', { lang: 'fr' })).fields.symbol.label).toBe('Symbole');
  });

  it('GET /api/get_registry answers in the Accept-Language of the caller when that language is active', async () => {
    const french = await t.api('GET', '/api/get_registry/Currency', undefined, { 'accept-language': 'fr-CH, fr;q=0.9, en;q=0.5' });
    expect(french.statusCode, french.body).toBe(200);
    expect(french.json().symbol.label).toBe('Symbole');
    const plain = await t.api('GET', '/api/get_registry/Currency');
    expect(plain.json().symbol.label).toBe('Symbol');
  });

  it('an upgrade loads the translations of active languages again (a module installed later gets them too)', async () => {
    await t.run(() => Translation.query({ lang: 'fr', key: 'field:Currency.symbol' }).delete());
    expect((await t.api('GET', '/api/get_registry/Currency', undefined, { 'accept-language': 'fr' })).json().symbol.label).toBe('Symbol');
    await t.platform.install(t.name, { update: ['core'] });
    expect((await t.api('GET', '/api/get_registry/Currency', undefined, { 'accept-language': 'fr' })).json().symbol.label).toBe('Symbole');
  });

  it('loads a right-to-left language the same way (Arabic labels for an Arabic caller)', async () => {
    await setActive('ar', true);
    const arabic = await registryAs('Language', { lang: 'ar' });
    expect(arabic.label).toBe('اللغة');
    expect(arabic.fields.direction.choices).toEqual([['ltr', 'من اليسار إلى اليمين'], ['rtl', 'من اليمين إلى اليسار']]);
    expect((await menusAs({ lang: 'ar' })).names['core.menu_settings']).toBe('الإعدادات');
    expect((await registryAs('Language', { lang: 'fr' })).fields.direction.label).toBe("Sens d'écriture");
    await setActive('ar', false);
  });

  it('reads Accept-Language by quality', () => {
    expect(parseAcceptLanguage('de;q=0.5, fr-CH, fr;q=0.9, *;q=0.8, en;q=0')).toEqual(['fr-CH', 'fr', 'de']);
    expect(parseAcceptLanguage(undefined)).toEqual([]);
  });
});

describe('formatting helpers', () => {
  const date = '2024-03-09';
  const afternoon = '2024-03-09T16:05:00Z';

  it('render dates and times with the language pattern', () => {
    expect(formatDate(date, langs.en!)).toBe('03/09/2024');
    expect(formatTime(afternoon, langs.en!)).toBe(`4:05${NNBSP}PM`);
    expect(formatTime('09:30', langs.en!)).toBe(`9:30${NNBSP}AM`);
    expect(formatTime('09:30', { ...langs.en!, time_format: 'HH:mm:ss' })).toBe('09:30:00');
    expect(formatDate(date, langs.fr!)).toBe('09/03/2024');
    expect(formatTime(afternoon, langs.fr!)).toBe('16:05');
    expect(formatDate(new Date(afternoon), langs.de!)).toBe('09.03.2024');
    expect(formatTime('09:30', langs.de!)).toBe('09:30');
    expect(formatDatetime(afternoon, langs.de!, { timeZone: 'Europe/Berlin' })).toBe('09.03.2024 17:05');
    expect(formatDate(date, langs.ja!)).toBe('2024/03/09');
    expect(formatTime(afternoon, langs.ko!)).toBe('PM 4:05'); // CLDR 48's Korean day period
    // A date string is a calendar day, whatever the time zone.
    expect(formatDate(date, langs.en!, { timeZone: 'Pacific/Honolulu' })).toBe('03/09/2024');
  });

  it('give, for every seeded language, what ICU renders (the patterns round-trip, digits included)', () => {
    const instant = new Date(afternoon);
    // formatToParts, not format: V8's format() swaps CLDR's narrow no-break space for a plain one.
    const icu = (code: string, options: Intl.DateTimeFormatOptions) =>
      new Intl.DateTimeFormat(code, { ...options, timeZone: 'UTC', calendar: 'gregory' }).formatToParts(instant).map((p) => p.value).join('');
    for (const l of Object.values(langs)) {
      const icuDate = icu(l.code, { day: '2-digit', month: '2-digit', year: 'numeric' });
      const icuTime = icu(l.code, { timeStyle: 'short' });
      expect(stripIsolate(formatDate(instant, l)), l.code).toBe(icuDate);
      expect(stripIsolate(formatTime(instant, l)), l.code).toBe(icuTime);
      expect(formatDate(instant, l).startsWith(RLI), l.code).toBe(l.direction === 'rtl');
    }
  });

  it('isolate right-to-left text and use the language digits, day periods and CLDR marks', () => {
    const ar = formatDate(date, langs.ar!);
    expect(ar).toBe(`${RLI}09${RLM}/03${RLM}/2024${PDI}`);
    expect(stripIsolate(ar)).toBe(`09${RLM}/03${RLM}/2024`);
    expect(formatTime(afternoon, langs.ar!)).toBe(`${RLI}4:05 م${PDI}`);
    expect(formatDate(date, langs['ar-EG']!)).toBe(`${RLI}٠٩${RLM}/٠٣${RLM}/٢٠٢٤${PDI}`);
    expect(formatDate(date, langs.fa!)).toBe(`${RLI}۲۰۲۴/۰۳/۰۹${PDI}`);
    expect(formatNumber(1234.5, langs['ar-EG']!, { digits: 2 })).toBe(`${RLI}١٬٢٣٤٫٥٠${PDI}`);
    expect(formatNumber(1234.5, langs.ar!, { digits: 2 })).toBe(`${RLI}1,234.50${PDI}`);
    // What Intl itself renders, marks included, once the isolate is taken off.
    expect(stripIsolate(formatDate(date, langs['ar-EG']!)))
      .toBe(new Intl.DateTimeFormat('ar-EG', { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: 'UTC' }).formatToParts(new Date(date)).map((p) => p.value).join(''));
  });

  it('render numbers with the row separators', () => {
    expect(formatNumber(1234567.891, langs.en!, { digits: 2 })).toBe('1,234,567.89');
    expect(formatNumber(1234567.891, langs.fr!, { digits: 2 })).toBe(`1${NNBSP}234${NNBSP}567,89`);
    expect(formatNumber(1234567.891, langs.de!, { digits: 2 })).toBe('1.234.567,89');
    expect(formatNumber(-0.5, langs.de!)).toBe('-0,5');
    expect(formatNumber(1234567, langs.hi!)).toBe('12,34,567');
    // An administrator's separator wins over CLDR's.
    expect(formatNumber(1234.5, { ...langs.de!, thousands_separator: "'", decimal_separator: '.' }, { digits: 1 })).toBe("1'234.5");
  });

  it('render amounts with the currency symbol, position and rounding', () => {
    expect(money.USD).toMatchObject({ symbol: '$', position: 'Before' });
    expect(money.EUR).toMatchObject({ symbol: '€', position: 'After' });
    expect(formatMonetary(1234.5, money.USD, langs.en!)).toBe('$1,234.50');
    expect(formatMonetary(-1234.567, money.USD, langs.en!)).toBe('-$1,234.57');
    expect(formatMonetary(1234.5, money.EUR, langs.fr!)).toBe(`1${NNBSP}234,50${NBSP}€`);
    expect(formatMonetary(1234.5, money.EUR, langs.de!)).toBe(`1.234,50${NBSP}€`);
    expect(formatMonetary(1234.5, money.JPY, langs.ja!)).toBe('¥1,235');
    expect(formatMonetary(12.5, { ...money.CHF, symbol: 'CHF', position: 'Before' }, langs.de!)).toBe(`CHF${NBSP}12,50`);
    expect(formatMonetary(1234.5, money.EUR, langs['ar-EG']!)).toBe(`${RLI}١٬٢٣٤٫٥٠${NBSP}€${PDI}`);
    // The minus sign keeps the bidi mark CLDR gives it (LRM in ar, ALM in ar-EG).
    expect(formatMonetary(-2.5, money.USD, langs.ar!)).toBe(`${RLI}\u200e-$2.50${PDI}`);
    expect(formatMonetary(-2.5, money.USD, langs['ar-EG']!)).toBe(`${RLI}\u061c-$٢٫٥٠${PDI}`);
  });
});
