/**
 * `BENCH_ONLY=reports npm run bench`: PDF reports (issue 11 item 8) — sales' quotation/order report
 * through `POST /api/generate_report` (in-process `app.inject`, the administrator's API key), each
 * case beside a baseline measured in the same run with the same browser:
 *
 * (a) one 20-page order (as many lines as fill 20 A4 pages): milliseconds per document.
 *     Baseline: `page.pdf()` of that document's finished HTML (the same bytes the report prints)
 *     through the same pooled Chromium — what printing alone costs, without reading the order,
 *     rendering the template or answering. The `html` format of the same report (data + LiquidJS,
 *     no browser) is printed too, to show where the rest goes.
 * (b) 100 one-page orders (3 lines each) in one call, answered as a ZIP: documents per second.
 *     Baseline: the same 100 finished HTML documents printed by the same engine, as many at once as
 *     its page pool allows (`Promise.all` over `PdfEngine.print`).
 *
 * Each case runs a warm-up, then BENCH_ROUNDS (default 5) interleaved rounds FieldForge / baseline;
 * the median is printed. Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local
 * server), BENCH_ROUNDS, BENCH_PAGES (default 20), BENCH_DOCS (default 100), BENCH_KEEP=1 (keep the
 * database). Needs Debian's chromium (`FF_CHROMIUM` to use another). Not a test: it prints.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { createServiceAccountKey } from '../src/auth/api-keys.js';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { buildApp } from '../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { createDatabase } from '../src/platform/database-lifecycle.js';
import { Platform } from '../src/platform/platform.js';
import { currentEnv } from '../src/orm/env.js';
import { QuerySet } from '../src/orm/queryset.js';
import { createRecords } from '../src/orm/write/create-records.js';
import { fromBuffer } from 'yauzl';
import { median, timed } from './bench-measures.js';
import { BENCH_BASE_URL } from './bench-database.js';

const BASE_URL = BENCH_BASE_URL;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const PAGES = Number(process.env.BENCH_PAGES ?? 20);
const DOCS = Number(process.env.BENCH_DOCS ?? 100);
const KEEP = process.env.BENCH_KEEP === '1';
const PDF_REPORT = 'sales.report_sale_order';
const HTML_REPORT = 'sales.report_sale_order_bench_html';

const log = (...args: unknown[]) => console.log(...args);

/** Pages of a PDF: poppler's `pdfinfo` when installed, else the page objects counted. */
function pageCount(pdf: Buffer): number {
  const info = spawnSync('pdfinfo', ['-'], { input: pdf, encoding: 'utf8' });
  const pages = info.status === 0 ? /^Pages:\s+(\d+)/m.exec(info.stdout) : null;
  return pages ? Number(pages[1]) : (pdf.toString('latin1').match(/\/Type\s*\/Page\b/g) ?? []).length;
}

/** The bodies of a ZIP's entries, in order. */
function zipBodies(zip: Buffer): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(err ?? new Error('not a zip'));
      const out: Buffer[] = [];
      file.on('end', () => resolve(out));
      file.on('entry', (entry) => file.openReadStream(entry, (e, stream) => {
        if (e || !stream) return reject(e ?? new Error('no stream'));
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => { out.push(Buffer.concat(chunks)); file.readEntry(); });
      }));
      file.readEntry();
    });
  });
}

async function main(): Promise<void> {
  const dbName = `ffbench_reports_${randomBytes(3).toString('hex')}`;
  const engine = new PostgresEngine({ url: BASE_URL });
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  let app: FastifyInstance | null = null;
  let created = false;
  try {
    log(`creating ${dbName} (core, contacts, sales)… load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, ${availableParallelism()} cores`);
    await createDatabase(platform, dbName, { modules: ['sales'] });
    created = true;
    const { key } = await platform.run(dbName, {}, () => createServiceAccountKey({ name: 'benchmark', groups: ['core.group_admin', 'core.group_user'] }));
    app = await buildApp(platform);
    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    const api = async (method: 'POST' | 'PUT', url: string, body: unknown) => {
      const res = await app!.inject({ method, url, headers, payload: JSON.stringify(body) });
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      return res;
    };
    const id = async (model: string, vals: Record<string, unknown>) => (await api('POST', `/api/create/${model}`, vals)).json().id as number;
    const report = async (reportId: string, ids: number[]) =>
      (await api('POST', '/api/generate_report', { model: 'SaleOrder', report_id: reportId, instance_ids: ids, context: { lang: 'fr' } })).rawPayload;

    // Seed: a customer, products, the HTML twin of the report (same template, no browser).
    await platform.run(dbName, {}, async () => {
      const { registry } = currentEnv();
      await createRecords(registry.meta('Report'), [{ identifier: HTML_REPORT, name: 'Order (HTML)', model: 'SaleOrder', template: 'reports/sale_order.html', filename: 'Order {{ record.name }}', format: 'html' }]);
      await new QuerySet(registry.meta('Language')).with_archived().filter({ code: 'fr' }).update({ active: true });
    });
    const customer = await id('Contact', { name: 'Boulangerie Dupont', street: '3 place du Marché', zip: '75004', city: 'Paris' });
    const products: number[] = [];
    for (let i = 0; i < 10; i++) products.push(await id('Product', { name: `Produit ${i + 1}`, default_code: `P-${i + 1}`, list_price: 10 + i * 3.25 }));
    const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ product: products[i % products.length], quantity: (i % 7) + 1 }));

    // (a) an order of PAGES pages: probe how many lines fill a page, then size the order.
    log(`seeding a ${PAGES}-page order and ${DOCS} one-page orders…`);
    const probe = await id('SaleOrder', { customer, order_lines: lines(300) });
    const perPage = 300 / pageCount(await report(PDF_REPORT, [probe]));
    let big = await id('SaleOrder', { customer, order_lines: lines(Math.round(perPage * (PAGES - 0.5))) });
    let bigPages = pageCount(await report(PDF_REPORT, [big]));
    if (bigPages !== PAGES) {
      big = await id('SaleOrder', { customer, order_lines: lines(Math.round(perPage * (PAGES - 0.5) * PAGES / bigPages)) });
      bigPages = pageCount(await report(PDF_REPORT, [big]));
    }
    const small: number[] = [];
    for (let i = 0; i < DOCS; i++) small.push(await id('SaleOrder', { customer, order_lines: lines(3) }));
    const smallPages = pageCount(await report(PDF_REPORT, [small[0]!]));
    const bigHtml = (await report(HTML_REPORT, [big])).toString('utf8');
    const smallHtml = (await zipBodies(await report(HTML_REPORT, small))).map((b) => b.toString('utf8'));
    log(`  the big order: ${bigPages} pages (${Math.round(perPage * (PAGES - 0.5))}± lines, ${(bigHtml.length / 1024).toFixed(0)} KiB of HTML); a small one: ${smallPages} page`);
    log(`  browser: one per platform (started ${platform.pdf.launches}×), ${platform.pdf.poolSize} pooled pages`);

    // (a) measured
    const a = { ff: [] as number[], bare: [] as number[], html: [] as number[] };
    await report(PDF_REPORT, [big]);
    await platform.pdf.print(bigHtml);
    for (let r = 0; r < ROUNDS; r++) {
      a.ff.push((await timed(() => report(PDF_REPORT, [big]))).ms);
      a.bare.push((await timed(() => platform.pdf.print(bigHtml))).ms);
      a.html.push((await timed(() => report(HTML_REPORT, [big]))).ms);
    }
    // (b) measured
    const b = { ff: [] as number[], bare: [] as number[], html: [] as number[] };
    await report(PDF_REPORT, small);
    for (let r = 0; r < ROUNDS; r++) {
      b.ff.push((await timed(() => report(PDF_REPORT, small))).ms);
      b.bare.push((await timed(() => Promise.all(smallHtml.map((h) => platform.pdf.print(h))))).ms);
      b.html.push((await timed(() => report(HTML_REPORT, small))).ms);
    }
    const ms = (v: number[]) => median(v).toFixed(0);
    const perSecond = (v: number[]) => (DOCS / (median(v) / 1000)).toFixed(1);
    log('');
    log(`| case | FieldForge | baseline | ratio (baseline time / FieldForge time) | data + template alone (html format) |`);
    log(`|---|---|---|---|---|`);
    log(`| (a) ${bigPages}-page order PDF | ${ms(a.ff)} ms | ${ms(a.bare)} ms (page.pdf of its HTML, same browser) | ${(median(a.bare) / median(a.ff)).toFixed(2)} | ${ms(a.html)} ms |`);
    log(`| (b) ${DOCS} one-page order PDFs, one ZIP | ${perSecond(b.ff)} documents/s | ${perSecond(b.bare)} documents/s (page.pdf of their HTML, same pool) | ${(median(b.bare) / median(b.ff)).toFixed(2)} | ${perSecond(b.html)} documents/s |`);
    log('');
    log(`medians of ${ROUNDS} interleaved rounds; browser started ${platform.pdf.launches}× in the whole run; load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await app?.close();
    await platform.pdf.close();
    if (created && !KEEP) await engine.drop(dbName).catch((err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await platform.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
