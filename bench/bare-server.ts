/**
 * The benchmark's yardstick: a bare `node:http` + `pg` server doing the same work as FieldForge's
 * model API for the four benchmark requests, with the same URLs, request bodies and answers, in
 * hand-written SQL (named prepared statements, one statement per request, a pool of 10).
 *
 * It checks the bearer key too, by default in memory (SHA-256 of the header compared with the
 * key's hash, given at start-up): a bare server needs no per-request SQL for that. FieldForge
 * looks the key up in the database on every request by design (revocation is immediate);
 * BENCH_BARE_AUTH=db makes this server do the same (FieldForge's lookup statement, prepared).
 * BENCH_BARE_PREPARED=0 sends every statement unnamed (parsed and planned each time, as
 * FieldForge's are) instead of as a named prepared statement.
 *
 * Environment: BENCH_DB_URL (the benchmark database), BENCH_KEY_HASH, BENCH_UID (the key's user,
 * for the audit columns of created tasks), PORT (0 = any free port; the port is printed).
 *
 * `GET /__cpu` answers this process's CPU time (process.cpuUsage), the statements run and the
 * `/api/` requests received so far.
 */
import type http from 'node:http';
import { HttpError, bearerDigest, countingPool, env, readBody, sameKey, serve } from './bare-http.js';

const keyHash = Buffer.from(env('BENCH_KEY_HASH'), 'hex');
const AUTH_IN_DB = process.env.BENCH_BARE_AUTH === 'db';
const uid = Number(env('BENCH_UID'));
// Same as FieldForge: a date stays its YYYY-MM-DD text.
const db = countingPool({ applicationName: 'ffbench-bare', prepared: process.env.BENCH_BARE_PREPARED !== '0', datesAsText: true });
const { query } = db;

// (a) one page of tasks of a stage, with the names of their stage and assignee.
const SQL_LIST = `SELECT t.id, t.name, t.deadline, t.stage_id, s.name AS stage_name, t.assignee_id, c.name AS assignee_name
  FROM project_task t
  LEFT JOIN project_stage s ON s.id = t.stage_id
  LEFT JOIN contact c ON c.id = t.assignee_id
  WHERE t.stage_id = $1 AND t.active IS TRUE
  ORDER BY t.deadline ASC, t.id ASC
  LIMIT $2 OFFSET $3`;
// (b) one task and its tags (ordered as ProjectTag's default order: name, then id).
const SQL_FETCH = `SELECT t.id, t.name,
    COALESCE((SELECT json_agg(json_build_object('id', g.id, 'name', g.name) ORDER BY g.name, g.id)
      FROM project_task_tags_rel r JOIN project_tag g ON g.id = r.project_tag_id
      WHERE r.project_task_id = t.id), '[]'::json) AS tags
  FROM project_task t WHERE t.id = $1`;
// (c) a task, with the same defaults, audit columns and stored computed values FieldForge writes
// (a project's task count is computed when read, so nothing else changes).
const SQL_CREATE = `INSERT INTO project_task (name, project_id, stage_id, assignee_id, deadline, priority, sequence,
      planned_hours, effective_hours, remaining_hours, subtask_count, active,
      created_date, created_by_id, updated_date, updated_by_id)
    VALUES ($1, $2, $3, $4, $5, '0', 10, 0, 0, 0, 0, TRUE, now(), $6, now(), $6)
    RETURNING id, name`;
// (d) `counter`: the number of tasks of a stage, plus the one-row page the request asks for.
const SQL_COUNT = `SELECT c.n, t.id, t.name
  FROM (SELECT count(*)::int AS n FROM project_task WHERE stage_id = $1 AND active IS TRUE) c
  LEFT JOIN LATERAL (SELECT id, name FROM project_task WHERE stage_id = $1 AND active IS TRUE ORDER BY id ASC LIMIT $2) t ON TRUE`;

const STAGE_FILTER = /^\s*Q\(\s*stage\s*=\s*(\d+)\s*\)\s*$/;

function named(id: number | null, name: string | null, verbose: string): Record<string, unknown> | null {
  if (id === null) return null;
  return { id, display_name: name ? name : `${verbose} #${id}`, name };
}

// FieldForge's per-request statement (src/auth/api-keys.ts), for BENCH_BARE_AUTH=db.
const SQL_AUTH = `SELECT s.installing, s.registry_version, a.user_id, a.company_id, a.id AS account_id
  FROM ff_state s
  LEFT JOIN api_key k ON k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
  LEFT JOIN service_account a ON a.id = k.service_account_id AND a.active IS TRUE
  WHERE s.id = 1`;

async function authenticate(req: http.IncomingMessage): Promise<void> {
  const digest = bearerDigest(req);
  if (AUTH_IN_DB) {
    const { rows } = await query<{ installing: boolean; user_id: number | null }>('ff_auth', SQL_AUTH, [digest.toString('hex')]);
    if (rows[0]?.installing) throw new HttpError(503, 'Installing');
    if (rows[0]?.user_id == null) throw new HttpError(401, 'Invalid credential');
    return;
  }
  if (!sameKey(digest, keyHash)) throw new HttpError(401, 'Invalid credential');
}

function stageOf(body: Record<string, unknown>): number {
  const m = STAGE_FILTER.exec(String(body.filter_str ?? ''));
  if (!m) throw new HttpError(400, 'This server only filters by stage');
  return Number(m[1]);
}

function intOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : fallback;
}

function idOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
}

async function handle(req: http.IncomingMessage): Promise<unknown> {
  const url = req.url ?? '/';
  await authenticate(req);
  if (req.method !== 'POST') throw new HttpError(404, 'Not found');
  const body = await readBody(req);

  if (url === '/api/query/ProjectTask') {
    const stage = stageOf(body);
    const limit = intOr(body.limit, 80);
    if (body.counter === true) {
      const { rows } = await query<{ n: number; id: number | null; name: string | null }>('ff_count', SQL_COUNT, [stage, limit]);
      return {
        count: rows[0]?.n ?? 0,
        data: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id, display_name: r.name || `Task #${r.id}` })),
      };
    }
    const page = intOr(body.page, 1);
    const { rows } = await query<{
      id: number; name: string; deadline: string | null; stage_id: number | null; stage_name: string | null;
      assignee_id: number | null; assignee_name: string | null;
    }>('ff_list', SQL_LIST, [stage, limit, (page - 1) * limit]);
    return rows.map((r) => ({
      id: r.id,
      display_name: r.name || `Task #${r.id}`,
      name: r.name,
      deadline: r.deadline,
      stage: named(r.stage_id, r.stage_name, 'Stage'),
      assignee: named(r.assignee_id, r.assignee_name, 'Contact'),
    }));
  }

  const fetch = /^\/api\/fetch\/ProjectTask\/(\d{1,10})$/.exec(url);
  if (fetch) {
    const id = Number(fetch[1]);
    const { rows } = await query<{ id: number; name: string; tags: { id: number; name: string }[] }>('ff_fetch', SQL_FETCH, [id]);
    const r = rows[0];
    if (!r) throw new HttpError(404, `ProjectTask ${id} does not exist`);
    return {
      id: r.id,
      display_name: r.name || `Task #${r.id}`,
      name: r.name,
      tags: r.tags.map((t) => ({ id: t.id, display_name: t.name || `Project Tag #${t.id}`, name: t.name })),
    };
  }

  if (url === '/api/create/ProjectTask') {
    const name = typeof body.name === 'string' ? body.name : '';
    if (!name) throw new HttpError(422, "Field 'name' of Task is required");
    const deadline = typeof body.deadline === 'string' ? body.deadline : null;
    const { rows } = await query<{ id: number; name: string }>('ff_create', SQL_CREATE, [
      name, idOrNull(body.project), idOrNull(body.stage), idOrNull(body.assignee), deadline, uid,
    ]);
    const r = rows[0]!;
    return { id: r.id, name: r.name, display_name: r.name };
  }

  throw new HttpError(404, 'Not found');
}

serve(db, handle);
