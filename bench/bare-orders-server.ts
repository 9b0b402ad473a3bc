/**
 * The yardstick of bench/ceiling-bench.ts: a bare `node:http` + `pg` server answering the four
 * BenchOrder requests of the benchmark with FieldForge's URLs, request bodies and answers (the
 * same JSON text), in hand-written SQL: one named prepared statement per request, a pool of 10.
 *
 * Keys are checked in memory (SHA-256 of the bearer key against the hashes given at start-up). A
 * restricted key (the clerk's) gets the record rule of bench_orders compiled into its statements,
 * as FieldForge compiles it: its own orders and unassigned ones.
 *
 * Partners are isolated by company as FieldForge isolates them (a partner of another company
 * reads as none, and a new order may only name a readable one), so both do the same SQL work.
 *
 * BENCH_BARE_PLAIN=1 makes it the plain program a user would write (issue 29's second baseline):
 * no credential checked at all, every request served as the first key's user with no record rule
 * — the same rows as the administrator's, none of the permission work.
 *
 * Environment: BENCH_DB_URL (the benchmark database), BENCH_KEYS (JSON `[{hash, uid, companies,
 * restricted}]`: each key's hash, its user — the audit columns of created orders, the rule's
 * `user_id` —, its companies, and whether the rule binds it), PORT (0 = any free port).
 */
import type http from 'node:http';
import { HttpError, bearerDigest, countingPool, env, readBody, sameKey, serve } from './bare-http.js';

interface Caller {
  hash: Buffer;
  uid: number;
  companies: number[];
  restricted: boolean;
}

const callers: Caller[] = (JSON.parse(env('BENCH_KEYS')) as (Omit<Caller, 'hash'> & { hash: string })[])
  .map((k) => ({ ...k, hash: Buffer.from(k.hash, 'hex') }));
// Its own application name: the ceiling bench runs it beside the guarded one.
const db = countingPool({ applicationName: process.env.BENCH_BARE_PLAIN === '1' ? 'ffbench-plain' : 'ffbench-bare', datesAsText: true });

/**
 * A statement in two versions, built once: the administrator's, and the restricted one with the
 * clerk's rule (`Q(salesperson=user_id) | Q(salesperson=None)`) on `salesperson`, its user the
 * parameter after the `params` others.
 */
interface Statement {
  name: string;
  params: number;
  text: { all: string; rule: string };
}

function statement(name: string, params: number, build: (rule: (salesperson: string) => string) => string): Statement {
  const user = `$${params + 1}::int`;
  return {
    name, params,
    text: { all: build(() => 'TRUE'), rule: build((sp) => `(${sp} = ${user} OR ${sp} IS NULL)`) },
  };
}

function query<R extends Record<string, unknown>>(s: Statement, caller: Caller, values: unknown[]) {
  const version = caller.restricted ? 'rule' : 'all';
  return db.query<R>(`${s.name}_${version}`, s.text[version], caller.restricted ? [...values, caller.uid] : values);
}

// Company isolation of partners (Contact has a company), $1 the caller's companies: a partner of
// another company shows as no partner.
const PARTNER_JOIN = 'LEFT JOIN contact p ON p.id = o.partner_id AND (p.company_id IS NULL OR p.company_id = ANY($1::int[]))';

// A page of orders of a state, newest first (ties by id, as FieldForge breaks them), with their
// partner's name.
const LIST = statement('list', 4, (rule) => `SELECT o.id, o.name, o.date_order, o.state, o.amount_total, p.id AS partner_id, p.name AS partner_name
  FROM bench_order o
  ${PARTNER_JOIN}
  WHERE o.state = $2 AND ${rule('o.salesperson_id')}
  ORDER BY o.date_order DESC, o.id ASC
  LIMIT $3 OFFSET $4`);
// One order with its partner's name.
const FETCH = statement('fetch', 2, (rule) => `SELECT o.id, o.name, o.state, o.date_order, o.amount_total, p.id AS partner_id, p.name AS partner_name
  FROM bench_order o
  ${PARTNER_JOIN}
  WHERE o.id = $2 AND ${rule('o.salesperson_id')}`);
// `counter`: the orders of a state, and the one-row page asked for.
const COUNT = statement('count', 2, (rule) => `SELECT c.n, t.id, t.name
  FROM (SELECT count(*)::int AS n FROM bench_order o WHERE o.state = $1 AND ${rule('o.salesperson_id')}) c
  LEFT JOIN LATERAL (SELECT o.id, o.name FROM bench_order o WHERE o.state = $1 AND ${rule('o.salesperson_id')} ORDER BY o.id ASC LIMIT $2) t ON TRUE`);
// An order with the defaults and audit columns FieldForge writes, written only when its partner is
// readable (company) and the rule allows the new row: nothing is written otherwise.
const CREATE = statement('create', 7, (rule) => `INSERT INTO bench_order (name, partner_id, state, date_order, amount_total, salesperson_id,
      created_date, created_by_id, updated_date, updated_by_id)
    SELECT $3::text, $4::int, 'draft', $5::date, $6::float8, $7::int, now(), $2::int, now(), $2::int
    WHERE EXISTS (SELECT 1 FROM contact p WHERE p.id = $4 AND (p.company_id IS NULL OR p.company_id = ANY($1::int[])))
      AND ${rule('$7::int')}
    RETURNING id, name`);

const STATE_FILTER = /^\s*Q\(\s*state\s*=\s*'(\w+)'\s*\)\s*$/;

const PLAIN = process.env.BENCH_BARE_PLAIN === '1';
const plainCaller: Caller = { ...callers[0]!, restricted: false };

function authenticate(req: http.IncomingMessage): Caller {
  if (PLAIN) return plainCaller;
  const digest = bearerDigest(req);
  const caller = callers.find((c) => sameKey(digest, c.hash));
  if (!caller) throw new HttpError(401, 'Invalid credential');
  return caller;
}

function stateOf(body: Record<string, unknown>): string {
  const m = STATE_FILTER.exec(String(body.filter_str ?? ''));
  if (!m) throw new HttpError(400, 'This server only filters by state');
  return m[1]!;
}

function intOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : fallback;
}

function idOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
}

type OrderRow = { id: number; name: string; date_order: string | null; state: string | null; amount_total: number | null; partner_id: number | null; partner_name: string | null };

const partnerOf = (r: OrderRow) => (r.partner_id === null ? null : { id: r.partner_id, display_name: r.partner_name, name: r.partner_name });

async function handle(req: http.IncomingMessage): Promise<unknown> {
  const caller = authenticate(req);
  if (req.method !== 'POST') throw new HttpError(404, 'Not found');
  const url = req.url ?? '/';
  const body = await readBody(req);

  if (url === '/api/query/BenchOrder') {
    const state = stateOf(body);
    const limit = intOr(body.limit, 80);
    if (body.counter === true) {
      const { rows } = await query<{ n: number; id: number | null; name: string | null }>(COUNT, caller, [state, limit]);
      return { count: rows[0]?.n ?? 0, data: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id, display_name: r.name })) };
    }
    const page = intOr(body.page, 1);
    const { rows } = await query<OrderRow>(LIST, caller, [caller.companies, state, limit, (page - 1) * limit]);
    return rows.map((r) => ({
      id: r.id, display_name: r.name, name: r.name, date_order: r.date_order, state: r.state, amount_total: r.amount_total, partner: partnerOf(r),
    }));
  }

  const fetch = /^\/api\/fetch\/BenchOrder\/(\d{1,10})$/.exec(url);
  if (fetch) {
    const id = Number(fetch[1]);
    const { rows: [r] } = await query<OrderRow>(FETCH, caller, [caller.companies, id]);
    if (!r) throw new HttpError(404, `BenchOrder ${id} does not exist`);
    return { id: r.id, display_name: r.name, name: r.name, state: r.state, date_order: r.date_order, amount_total: r.amount_total, partner: partnerOf(r) };
  }

  if (url === '/api/create/BenchOrder') {
    const name = typeof body.name === 'string' ? body.name : '';
    if (!name) throw new HttpError(400, "Field 'name' of Benchmark Order is required");
    const { rows: [r] } = await query<{ id: number; name: string }>(CREATE, caller, [
      caller.companies, caller.uid, name, idOrNull(body.partner), typeof body.date_order === 'string' ? body.date_order : null,
      typeof body.amount_total === 'number' ? body.amount_total : null, idOrNull(body.salesperson),
    ]);
    if (!r) throw new HttpError(400, 'The partner does not exist or the record rules refuse this order');
    return { id: r.id, name: r.name, display_name: r.name };
  }

  throw new HttpError(404, 'Not found');
}

serve(db, handle);
