/**
 * The client's value formatting (web/client/format.js), run in Debian's Chromium: it renders
 * numbers, dates, datetimes and amounts exactly as the server's `src/i18n/format.ts` does for
 * reports, in languages with other separators, digits, orders and directions; it shows selection
 * labels, relation names and booleans; and a `Language` record an administrator changed wins
 * over the derived formats once loaded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { formatDate, formatDatetime, formatMonetary, formatNumber } from '../../src/i18n/format.js';
import { pageImportMap } from '../../src/http/import-map.js';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('core');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

/** A signed-in page (UTC, so instants read the same as the server's UTC rendering) with format.js loaded as `window.fmt`. */
async function formatPage(): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { timezoneId: 'UTC' } });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  await g.page.goto('/web/platform.js');
  await g.page.setContent(`<!doctype html><html><head>${pageImportMap().tag}<script type="module">
    import * as fmt from '/web/client/format.js';
    window.fmt = fmt;
  </script></head><body></body></html>`);
  await g.page.waitForFunction(() => 'fmt' in window);
  return g;
}

const CODES = ['en', 'en-GB', 'fr', 'de-CH', 'ar', 'hi', 'ja', 'fa'];
const EUR = { name: 'EUR', symbol: '€', position: 'After' as const, rounding: 0.01 };
const CHF = { name: 'CHF', symbol: 'CHF', position: 'Before' as const, rounding: 0.05 };
const JPY = { name: 'JPY', symbol: '¥', position: 'Before' as const, rounding: 1 };

describe('client value formatting', () => {
  it('renders numbers, dates, datetimes and amounts as the server does, language by language', async () => {
    const g = await formatPage();
    // The page reads each language's record, as a view does (the browser's CLDR may differ in a
    // detail from the server's: a narrow no-break space before "PM", say).
    const client = await g.page.evaluate(async ({ codes, eur, chf, jpy }) => {
      const fmt = (window as any).fmt;
      for (const code of codes) await fmt.loadLanguage(code);
      return codes.map((lang: string) => [
        fmt.formatNumber(1234567.891, { digits: 2, lang }),
        fmt.formatNumber(-0.5, { lang }),
        fmt.formatDate('2024-03-05', lang),
        fmt.formatDatetime('2024-03-05T14:07:09Z', lang),
        fmt.formatMonetary(-1234.505, eur, lang),
        fmt.formatMonetary(12.52, chf, lang),
        fmt.formatMonetary(1999.6, jpy, lang),
      ]);
    }, { codes: CODES, eur: EUR, chf: CHF, jpy: JPY });
    const records = await (await t.api('POST', '/api/query/Language', {
      fields: ['code', 'direction', 'date_format', 'time_format', 'decimal_separator', 'thousands_separator'],
      filter_str: `Q(code__in=${JSON.stringify(CODES)}) & Q(active__in=[True, False])`,
    })).json();
    expect(records).toHaveLength(CODES.length);
    const server = CODES.map((code) => {
      const lang = records.find((r: { code: string }) => r.code === code);
      return [
        formatNumber(1234567.891, lang, { digits: 2 }),
        formatNumber(-0.5, lang),
        formatDate('2024-03-05', lang),
        formatDatetime('2024-03-05T14:07:09Z', lang, { timeZone: 'UTC' }),
        formatMonetary(-1234.505, EUR, lang),
        formatMonetary(12.52, CHF, lang),
        formatMonetary(1999.6, JPY, lang),
      ];
    });
    expect(client).toEqual(server);
    // And they are what a person of each language expects.
    expect(client[0]).toEqual(['1,234,567.89', '-0.5', '03/05/2024', expect.stringMatching(/^03\/05\/2024 2:07\s?PM$/), '-1,234.51\u00a0€', 'CHF\u00a012.50', '¥2,000']);
    expect(client[2]!.slice(0, 3)).toEqual(['1\u202f234\u202f567,89', '-0,5', '05/03/2024']);
    g.assertClean();
    await g.close();
  });

  it('shows selection labels, relation names, booleans and amounts in the record\'s currency', async () => {
    const g = await formatPage();
    const shown = await g.page.evaluate(() => {
      const { formatValue } = (window as any).fmt;
      const record = { currency: { id: 2, display_name: 'EUR', name: 'EUR', symbol: '€', position: 'After', rounding: 0.01 } };
      return [
        formatValue({ type: 'Selection', choices: [['0', 'Normal'], ['2', 'Urgent']] }, '2', { lang: 'en' }),
        formatValue({ type: 'ManyToOne' }, { id: 4, display_name: 'Acme' }, { lang: 'en' }),
        formatValue({ type: 'ManyToMany' }, [{ id: 1, display_name: 'VIP' }, { id: 2, display_name: 'Supplier' }], { lang: 'en' }),
        formatValue({ type: 'Boolean' }, true, { lang: 'en' }),
        formatValue({ type: 'Boolean' }, false, { lang: 'en' }),
        formatValue({ type: 'Monetary', name: 'amount', currency_field: 'currency' }, 1500, { lang: 'fr', record }),
        formatValue({ type: 'Monetary', name: 'amount' }, 1500, { lang: 'en' }),
        formatValue({ type: 'Float', precision: 3 }, 2.5, { lang: 'de' }),
        formatValue({ type: 'Integer' }, 12000, { lang: 'en' }),
        formatValue({ type: 'Char' }, null, { lang: 'en' }),
      ];
    });
    expect(shown).toEqual(['Urgent', 'Acme', 'VIP, Supplier', 'Yes', 'No', '1\u202f500,00\u00a0€', '1,500.00', '2,500', '12,000', '']);
    g.assertClean();
    await g.close();
  });

  it('uses the Language record once loaded: an administrator\'s separators win over the derived ones', async () => {
    const [fr] = await (await t.api('POST', '/api/query/Language', { fields: ['code'], filter_str: "Q(code='fr') & Q(active__in=[True, False])" })).json();
    expect((await t.api('PUT', `/api/update/Language/${fr.id}`, { active: true, thousands_separator: '.', decimal_separator: ',', date_format: 'DD.MM.YYYY' })).statusCode).toBe(200);
    const g = await formatPage();
    const [before, after] = await g.page.evaluate(async () => {
      const fmt = (window as any).fmt;
      const text = () => `${fmt.formatNumber(1234.5, { digits: 2, lang: 'fr' })} ${fmt.formatDate('2024-03-05', 'fr')}`;
      const derived = text();
      await fmt.loadLanguage('fr');
      return [derived, text()];
    });
    expect(before).toBe('1\u202f234,50 05/03/2024');
    expect(after).toBe('1.234,50 05.03.2024');
    g.assertClean();
    await g.close();
  });
});
