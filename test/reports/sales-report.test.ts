/**
 * The reports sales and project ship (issue 11 item 7, CONTRACTS C1 "Reports"), printed by the
 * real Debian Chromium and read back with `pdftotext`: the quotation/order shows the company's
 * and the customer's addresses, its lines and totals in the order's currency, written the way the
 * caller's language writes them; several orders give a ZIP of one PDF each; the data of 100
 * orders costs the statements of one; a customer named `<script>` is printed as text; the
 * `action_print` button answers the document; the task sheet shows a task's facts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { Company } from '../../modules/core/models/company.js';
import { Country } from '../../modules/core/models/country.js';
import { Currency } from '../../modules/core/models/currency.js';
import { Language } from '../../modules/core/models/language.js';
import { pdfPages, pdfText, plain } from '../support/pdf-text.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { zipEntries } from '../support/zip-entries.js';

let t: TestDatabase;
const ids: Record<string, number> = {};
const REPORT = 'sales.report_sale_order';

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  await t.run(async () => {
    ids.EUR = (await Currency.query({ name: 'EUR' }).with_archived().first())!.id;
    ids.USD = (await Currency.query({ name: 'USD' }).with_archived().first())!.id;
    const france = (await Country.query({ code: 'FR' }).first())!.id;
    ids.company = (await Company.query().order_by('id ASC').first())!.id;
    await Company.query({ id: ids.company }).update({
      name: 'Atelier Lumière', street: '12 rue des Fleurs', zip: '69002', city: 'Lyon', country: france,
      email: 'contact@atelier.example', phone: '+33 4 00 00 00 00', currency: ids.EUR,
    });
    await Language.query({ code: 'fr' }).with_archived().update({ active: true });
  });
  ids.customer = await create('Contact', { name: 'Boulangerie Dupont', is_company: true, street: '3 place du Marché', zip: '75004', city: 'Paris', email: 'achats@dupont.example' });
  ids.lamp = await create('Product', { name: 'Lampe de bureau', default_code: 'LAMP-01', list_price: 411.52 });
  ids.bulb = await create('Product', { name: 'Ampoule', list_price: 2.5 });
  ids.order = await create('SaleOrder', {
    customer: ids.customer, date_order: '2026-03-09', note: 'Paiement à 30 jours',
    order_lines: [{ product: ids.lamp, quantity: 3 }, { product: ids.bulb, quantity: 12 }],
  });
});
afterAll(async () => { await t?.close(); });

async function create(model: string, vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

function orderName(id: number): string {
  return `S${String(id).padStart(5, '0')}`;
}

describe('the quotation / order report', () => {
  it('is a PDF of the order: addresses, lines and totals in the order currency, in the caller\'s language (French)', async () => {
    const res = await t.api('POST', '/api/generate_report', { model: 'SaleOrder', report_id: REPORT, instance_ids: [ids.order], context: { lang: 'fr' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Order ${orderName(ids.order)}.pdf"`);
    expect(res.headers['x-action-close']).toBeUndefined();
    expect(res.headers['x-action-reload']).toBeUndefined();
    const pdf = res.rawPayload;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const text = plain(await pdfText(pdf));
    // The company's letterhead and the customer's address.
    for (const value of ['Atelier Lumière', '12 rue des Fleurs', '69002 Lyon', 'France', 'contact@atelier.example',
      'Boulangerie Dupont', '3 place du Marché', '75004 Paris', 'achats@dupont.example']) {
      expect(text).toContain(value);
    }
    expect(text).toContain(`Quotation ${orderName(ids.order)}`);
    // Lines: descriptions, the product reference, quantities, units and unit prices in French.
    expect(text).toContain('Lampe de bureau');
    expect(text).toContain('[LAMP-01]');
    expect(text).toContain('Ampoule');
    expect(text).toContain('411,52');
    expect(text).toContain('2,50');
    // 3 × 411.52 = 1,234.56 and 12 × 2.50 = 30.00; the total 1,264.56 — as French writes euros.
    expect(text).toContain('1 234,56 €');
    expect(text).toContain('30,00 €');
    expect(text).toContain('1 264,56 €');
    expect(text).toContain('09/03/2026');
    expect(text).toContain('Paiement à 30 jours');
    expect(await pdfPages(pdf)).toBe(1);
  });

  it('writes the same order the way English writes it when the caller asks for English', async () => {
    const res = await t.api('POST', '/api/generate_report', { model: 'SaleOrder', report_id: REPORT, instance_ids: [ids.order] }, { 'accept-language': 'en-US' });
    expect(res.statusCode, res.body).toBe(200);
    const text = plain(await pdfText(res.rawPayload));
    expect(text).toMatch(/1,264\.56\s?€/);
    expect(text).toContain('03/09/2026');
    expect(text).not.toContain('1 264,56');
  });

  it('shows a foreign-currency order in its own currency, with the company-currency total beside it', async () => {
    const usd = await create('SaleOrder', { customer: ids.customer, currency: ids.USD, order_lines: [{ product: ids.bulb, quantity: 1, price_unit: 1000 }] });
    const res = await t.api('POST', '/api/generate_report', { model: 'SaleOrder', report_id: REPORT, instance_ids: [usd], context: { lang: 'fr' } });
    expect(res.statusCode, res.body).toBe(200);
    const text = plain(await pdfText(res.rawPayload));
    expect(text).toMatch(/1 000,00\s?\$|\$\s?1 000,00/);
    expect(text).toContain('Total in EUR');
  });

  it('gives several orders as a ZIP of one PDF per order, in the order asked, each with its own values', async () => {
    const second = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product: ids.bulb, quantity: 4 }] });
    const res = await t.api('POST', '/api/generate_report', { model: 'SaleOrder', report_id: REPORT, instance_ids: [second, ids.order], context: { lang: 'fr' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Quotation - Order.zip"');
    const entries = await zipEntries(res.rawPayload);
    expect(entries.map((e) => e.name)).toEqual([`Order ${orderName(second)}.pdf`, `Order ${orderName(ids.order)}.pdf`]);
    const [a, b] = await Promise.all(entries.map((e) => pdfText(e.body).then(plain)));
    expect(a).toContain('10,00 €');
    expect(a).not.toContain('Lampe de bureau');
    expect(b).toContain('1 264,56 €');
  });

  it('takes a selection: every quotation of the customer, in the model\'s order', async () => {
    const res = await t.api('POST', '/api/generate_report', {
      model: 'SaleOrder', report_id: REPORT, selection: { filter_str: `Q(customer=${ids.customer}) & Q(currency=${ids.EUR})` },
    });
    expect(res.statusCode, res.body).toBe(200);
    const names = (await zipEntries(res.rawPayload)).map((e) => e.name);
    expect(names.length).toBeGreaterThanOrEqual(2);
    expect(names).toContain(`Order ${orderName(ids.order)}.pdf`);
  });

  it('prints a customer named <script> as text: the template escapes every value', async () => {
    const evil = await create('Contact', { name: '<script>alert("x")</script> & Co', street: '<b>bold</b>' });
    const order = await create('SaleOrder', { customer: evil, order_lines: [{ product: ids.bulb, quantity: 1 }] });
    const res = await t.api('POST', '/api/generate_report', { model: 'SaleOrder', report_id: REPORT, instance_ids: [order] });
    expect(res.statusCode, res.body).toBe(200);
    const text = plain(await pdfText(res.rawPayload));
    expect(text).toContain('<script>alert("x")</script> & Co');
    expect(text).toContain('<b>bold</b>');
  });

  it('reads the data of 100 orders with lines, customer and currency in as many statements as for one', async () => {
    const product = ids.bulb;
    const created = await t.api('POST', '/api/create/SaleOrder', { customer: ids.customer, order_lines: [{ product, quantity: 1 }, { product: ids.lamp, quantity: 2 }] });
    const one = [created.json().id as number];
    const many: number[] = [];
    for (let i = 0; i < 100; i++) many.push(await create('SaleOrder', { customer: ids.customer, order_lines: [{ product, quantity: i + 1 }, { product: ids.lamp, quantity: 1 }] }));
    // HTML: the same data path and template as the PDF, without printing 100 PDFs here.
    const body = (instance_ids: number[]) => ({ model: 'SaleOrder', report_id: 'sales.report_sale_order_html', instance_ids, context: { lang: 'fr' } });
    await t.run(async () => {
      const { Report } = await import('../../modules/core/models/report.js');
      await Report.create({ identifier: 'sales.report_sale_order_html', name: 'Order (HTML)', model: 'SaleOrder', template: 'reports/sale_order.html', filename: 'Order {{ record.name }}', format: 'html' });
    });
    await t.api('POST', '/api/generate_report', body(one)); // warm: the worker knows the key
    let single!: { statusCode: number; rawPayload: Buffer };
    let hundred!: { statusCode: number; rawPayload: Buffer };
    const few = await t.countStatements(async () => { single = await t.api('POST', '/api/generate_report', body(one)); });
    const lots = await t.countStatements(async () => { hundred = await t.api('POST', '/api/generate_report', body(many)); });
    expect(single.statusCode).toBe(200);
    expect(hundred.statusCode).toBe(200);
    expect(lots.count, lots.statements.join('\n')).toBe(few.count);
    // The Report row (its statement carries the credential check), the ids' visibility, the active
    // languages, and one SELECT of the orders with their lines, customer, company and currencies.
    expect(few.count, few.statements.join('\n')).toBe(4);
    // …and the hundred documents hold their own lines.
    const entries = await zipEntries(hundred.rawPayload);
    expect(entries).toHaveLength(100);
    const last = entries[99]!.body.toString('utf8');
    expect(last).toContain(`Quotation ${orderName(many[99]!)}`);
    expect(last).toMatch(/<td class="num">100<\/td>/);
  });
});

describe('the print button (a method returning a report action)', () => {
  it('answers the order\'s PDF from /api/execute', async () => {
    const res = await t.api('POST', `/api/execute/SaleOrder/action_print`, { ids: [ids.order], request_body: { context: { lang: 'fr' } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Order ${orderName(ids.order)}.pdf"`);
    expect(plain(await pdfText(res.rawPayload))).toContain('1 264,56 €');
  });
});

describe('access', () => {
  it('a salesperson prints; a key without sales rights is refused; an order that does not exist is a 404', async () => {
    const seller = (await t.run(() => createServiceAccountKey({ name: 'seller', groups: ['core.group_user', 'sales.group_sale_user'] }))).key;
    const stranger = (await t.run(() => createServiceAccountKey({ name: 'stranger', groups: ['core.group_user'] }))).key;
    const body = { model: 'SaleOrder', report_id: REPORT, instance_ids: [ids.order] };
    const ok = await t.api('POST', '/api/generate_report', body, { authorization: `Bearer ${seller}` });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(plain(await pdfText(ok.rawPayload))).toContain('Boulangerie Dupont');
    const refused = await t.api('POST', '/api/generate_report', body, { authorization: `Bearer ${stranger}` });
    expect(refused.statusCode, refused.body).toBe(403);
    const missing = await t.api('POST', '/api/generate_report', { ...body, instance_ids: [ids.order, 999999] });
    expect(missing.statusCode, missing.body).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'NotFound' });
  });
});

describe('the task sheet', () => {
  it('is a PDF of the task: project, customer, stage, assignee, deadline, hours and sub-tasks', async () => {
    const customer = await create('Contact', { name: 'Mairie de Lyon' });
    const assignee = await create('Contact', { name: 'Camille Martin' });
    const project = await create('ProjectProject', { name: 'Rénovation', customer });
    const task = await create('ProjectTask', {
      name: 'Poser les luminaires', project, assignee, deadline: '2026-04-30', priority: '2',
      planned_hours: 1234.5, effective_hours: 4.25, description: 'Salle du conseil',
    });
    await create('ProjectTask', { name: 'Acheter les câbles', project, parent: task, planned_hours: 2 });
    const res = await t.api('POST', '/api/generate_report', { model: 'ProjectTask', report_id: 'project.report_project_task', instance_ids: [task], context: { lang: 'fr' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="Task Poser les luminaires.pdf"');
    const text = plain(await pdfText(res.rawPayload));
    for (const value of ['Poser les luminaires', 'Rénovation', 'Mairie de Lyon', 'Camille Martin', 'Urgent', '30/04/2026',
      '1 234,50', '4,25', '1 230,25', 'Salle du conseil', 'Acheter les câbles', 'Atelier Lumière']) {
      expect(text).toContain(value);
    }
  });
});
