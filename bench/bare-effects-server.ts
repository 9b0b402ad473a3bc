/**
 * The yardstick of bench/effects-bench.ts: a bare `node:http` + `pg` server answering the two
 * order-line form effects of the benchmark by hand, with the same URL, request bodies and answers
 * as FieldForge's `POST /api/ui-effect/SaleOrderLine` (CONTRACTS C1), one parameterised SQL
 * statement per request (named prepared statements, a pool of 10), nothing written:
 *
 * - a new line choosing a product (`{vals: {order, product, quantity?}, field_name: 'product'}`):
 *   reads the product's name, unit and list price, the order's currency, company and rate and the
 *   sum of the order's other lines' subtotals; answers the line's description (its display name
 *   too), unit, price,
 *   quantity in the product's unit, subtotal, currency, company, default sequence and the order's
 *   new totals;
 * - a saved line changing its quantity (`{id, vals: {quantity}, field_name: 'quantity'}`): reads the
 *   line's price and units, the order's rate and the other lines' subtotals; answers what changes
 *   (quantity in the product's unit, subtotal, the order's totals).
 *
 * Amounts are rounded like FieldForge rounds them (half away from zero to the currency's and the
 * unit's `rounding`). It handles the benchmark's data only: a product priced in another currency
 * than the order's is refused (400), where FieldForge would convert it at the order's rate.
 *
 * The bearer key is checked in memory (SHA-256 of the header against BENCH_KEY_HASH): a bare
 * server needs no SQL for it, nor for access rights (FieldForge checks the key and the caller's
 * write right in the database on every request, by design).
 *
 * Environment: BENCH_DB_URL (the benchmark database), BENCH_KEY_HASH, PORT (0 = any free port; the
 * port is printed as `{"ready":true,"port":…}`). `GET /__cpu` answers this process's CPU time, the
 * statements run and the `/api/` requests received so far.
 */
import type http from 'node:http';
import { HttpError, bearerDigest, countingPool, env, readBody, sameKey, serve } from './bare-http.js';

const keyHash = Buffer.from(env('BENCH_KEY_HASH'), 'hex');
const db = countingPool({ applicationName: 'ffbench-bare-effects' });
const { query } = db;

// A new line of order $2 choosing product $1: the product, its unit, the order and its other lines.
const SQL_PRODUCT = `SELECT p.name, p.list_price, p.currency_id AS product_currency, p.uom_id, u.name AS uom_name,
    u.factor AS uom_factor, u.rounding AS uom_rounding,
    o.currency_id, c.name AS currency_name, c.rounding AS currency_rounding,
    o.company_id, co.name AS company_name, o.currency_rate, cc.rounding AS company_rounding,
    o.amount_total, o.amount_total_company,
    (SELECT COALESCE(sum(l.subtotal), 0) FROM sale_order_line l WHERE l.order_id = o.id) AS others
  FROM product p
  JOIN uom u ON u.id = p.uom_id
  CROSS JOIN sale_order o
  LEFT JOIN currency c ON c.id = o.currency_id
  LEFT JOIN company co ON co.id = o.company_id
  LEFT JOIN currency cc ON cc.id = o.company_currency_id
  WHERE p.id = $1 AND p.active IS TRUE AND o.id = $2`;

// A saved line $1: its price, its unit and the product's, the order and its other lines.
const SQL_LINE = `SELECT l.order_id, l.quantity, l.price_unit, l.product_qty, l.subtotal,
    lu.factor AS line_factor, pu.factor AS product_factor, pu.rounding AS product_rounding,
    c.rounding AS currency_rounding, o.currency_rate, cc.rounding AS company_rounding,
    o.amount_total, o.amount_total_company,
    (SELECT COALESCE(sum(x.subtotal), 0) FROM sale_order_line x WHERE x.order_id = l.order_id AND x.id <> l.id) AS others
  FROM sale_order_line l
  JOIN sale_order o ON o.id = l.order_id
  JOIN product p ON p.id = l.product_id
  LEFT JOIN uom lu ON lu.id = l.uom_id
  LEFT JOIN uom pu ON pu.id = p.uom_id
  LEFT JOIN currency c ON c.id = o.currency_id
  LEFT JOIN currency cc ON cc.id = o.company_currency_id
  WHERE l.id = $1`;

/** Half away from zero to a multiple of `step` (binary noise trimmed first); no step → unchanged. */
function round(value: number, step: unknown): number {
  const size = Math.abs(Number(step ?? 0));
  if (!size || !Number.isFinite(value)) return value;
  const steps = Number((Math.abs(value) / size).toPrecision(15));
  let decimals = 0;
  while (decimals < 15 && Math.abs(size * 10 ** decimals - Math.round(size * 10 ** decimals)) >= 1e-9 * size * 10 ** decimals) decimals++;
  const result = Number((Math.sign(value) * Math.floor(steps + 0.5) * size).toFixed(decimals));
  return result === 0 ? 0 : result;
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

function positiveInt(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new HttpError(400, `'${what}' must be a record id`);
  return v;
}

function quantityOf(vals: Record<string, unknown>, fallback: number): number {
  if (!('quantity' in vals)) return fallback;
  if (typeof vals.quantity !== 'number' || !Number.isFinite(vals.quantity)) throw new HttpError(400, "Field 'quantity': expected a number");
  return vals.quantity;
}

/** The order's totals with this line's subtotal instead of the stored one, when they change. */
function orderTotals(orderId: number, others: number, subtotal: number, row: Record<string, unknown>): Record<string, unknown> | null {
  const total = round(others + subtotal, row.currency_rounding);
  const totalCompany = round(total * num(row.currency_rate ?? 1), row.company_rounding);
  const out: Record<string, unknown> = { id: orderId };
  if (total !== num(row.amount_total)) out.amount_total = total;
  if (totalCompany !== num(row.amount_total_company)) out.amount_total_company = totalCompany;
  return Object.keys(out).length > 1 ? out : null;
}

async function newLineProduct(vals: Record<string, unknown>): Promise<Record<string, unknown>> {
  const product = positiveInt(vals.product, 'product');
  const order = positiveInt(vals.order, 'order');
  const quantity = quantityOf(vals, 1);
  const { rows: [r] } = await query<Record<string, unknown>>('fx_product', SQL_PRODUCT, [product, order]);
  if (!r) throw new HttpError(400, `Product ${product} or order ${order} does not exist`);
  if (r.product_currency !== r.currency_id) throw new HttpError(400, 'This server does not convert currencies');
  const priceUnit = Number(num(r.list_price).toFixed(6));
  const subtotal = round(quantity * priceUnit, r.currency_rounding);
  const answer: Record<string, unknown> = {
    sequence: 10,
    name: r.name,
    // The line is named by its description; a new line without one has no name until saved.
    display_name: r.name ? r.name : null,
    uom: { id: r.uom_id, display_name: r.uom_name },
    price_unit: priceUnit,
    // The line's unit is the product's: the quantity in the product's unit is the quantity, rounded.
    product_qty: round(quantity, r.uom_rounding),
    currency: r.currency_id === null ? null : { id: r.currency_id, display_name: r.currency_name },
    company: r.company_id === null ? null : { id: r.company_id, display_name: r.company_name },
    subtotal,
  };
  if (!('quantity' in vals)) answer.quantity = 1;
  const totals = orderTotals(order, num(r.others), subtotal, r);
  if (totals) answer.order = totals;
  return answer;
}

async function savedLineQuantity(id: number, vals: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { rows: [r] } = await query<Record<string, unknown>>('fx_line', SQL_LINE, [id]);
  if (!r) throw new HttpError(404, `SaleOrderLine ${id} does not exist`);
  const quantity = quantityOf(vals, num(r.quantity));
  const priceUnit = typeof vals.price_unit === 'number' ? vals.price_unit : num(r.price_unit);
  const answer: Record<string, unknown> = {};
  const lineFactor = r.line_factor === null ? null : num(r.line_factor);
  const productFactor = r.product_factor === null ? null : num(r.product_factor);
  const productQty = lineFactor === null || productFactor === null || !productFactor
    ? quantity
    : round((quantity * lineFactor) / productFactor, r.product_rounding);
  if (productQty !== num(r.product_qty)) answer.product_qty = productQty;
  const subtotal = round(quantity * priceUnit, r.currency_rounding);
  if (subtotal !== num(r.subtotal)) answer.subtotal = subtotal;
  const totals = orderTotals(Number(r.order_id), num(r.others), subtotal, r);
  if (totals) answer.order = totals;
  return answer;
}

function authenticate(req: http.IncomingMessage): void {
  if (!sameKey(bearerDigest(req), keyHash)) throw new HttpError(401, 'Invalid credential');
}

async function handle(req: http.IncomingMessage): Promise<unknown> {
  authenticate(req);
  if (req.method !== 'POST' || req.url !== '/api/ui-effect/SaleOrderLine') throw new HttpError(404, 'Not found');
  const body = await readBody(req);
  const vals = typeof body.vals === 'object' && body.vals !== null && !Array.isArray(body.vals) ? (body.vals as Record<string, unknown>) : {};
  if (body.field_name === 'product' && body.id === undefined) return newLineProduct(vals);
  if (body.field_name === 'quantity' && body.id !== undefined) return savedLineQuantity(positiveInt(body.id, 'id'), vals);
  throw new HttpError(400, 'This server answers a new line choosing a product and a saved line changing its quantity only');
}

serve(db, handle);
