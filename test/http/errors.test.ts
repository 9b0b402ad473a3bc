/**
 * The error catalogue on the wire (spec §7, ARCHITECTURE §5): `{detail, error}` bodies with the
 * right status, `traceback` only in dev mode. Exact bodies are checked on a non-dev app.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, MAX_JSON_DEPTH } from '../../src/http/app.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;
let smallApp: FastifyInstance;

beforeAll(async () => {
  t = await testDatabase('full');
  app = await buildApp(t.platform, { dev: false });
  smallApp = await buildApp(t.platform, { dev: false, bodyLimit: 1024 });
});
afterAll(async () => {
  await app?.close();
  await smallApp?.close();
  await t?.close();
});

function send(target: FastifyInstance, method: 'GET' | 'POST' | 'PUT', url: string, payload?: string, contentType = 'application/json') {
  return target.inject({
    method, url,
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, ...(payload === undefined ? {} : { 'content-type': contentType }) },
    ...(payload === undefined ? {} : { payload }),
  });
}

describe('error bodies', () => {
  it('a JSON body that is not an object is a 400', async () => {
    for (const payload of ['[]', '[1, 2]', '"text"', '42', 'true']) {
      const query = await send(app, 'POST', '/api/query/ProjectTask', payload);
      expect(query.statusCode, payload).toBe(400);
      expect(query.json()).toEqual({ detail: 'The request body must be a JSON object', error: 'BadRequest' });
      const create = await send(app, 'POST', '/api/create/ProjectTask', payload);
      expect(create.statusCode, payload).toBe(400);
      expect(create.json()).toEqual({ detail: 'The request body must be an object of field values', error: 'BadRequest' });
    }
  });

  it('an empty body means no parameters for a query', async () => {
    const res = await send(app, 'POST', '/api/query/ProjectTask', '');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
  });

  it('invalid JSON is a 400 {detail, error}', async () => {
    for (const payload of ['{', '{"name": }', "{'name': 'x'}", '{"a":1}}']) {
      const res = await send(app, 'POST', '/api/create/ProjectTask', payload);
      expect(res.statusCode, payload).toBe(400);
      expect(res.json()).toEqual({ detail: 'The request body is not valid JSON', error: 'BadRequest' });
    }
    const count = await send(app, 'POST', '/api/query/ProjectTask', JSON.stringify({ counter: true }));
    expect(count.json().count).toBe(0);
  });

  it('a body nested deeper than MAX_JSON_DEPTH is a 400, wherever the nesting is (no stack overflow, no 500)', async () => {
    const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const detail = `The request body is nested too deeply (more than ${MAX_JSON_DEPTH} levels)`;
    const cases: [string, string][] = [
      ['/api/create/ProjectProject', `{"name":"x","tasks":${deepArray(100_000)}}`],
      ['/api/create/ProjectTask', `{"name":"x","tags":${deepArray(100_000)}}`],
      ['/api/create/ProjectTask', `{"name":${deepArray(100_000)}}`],
      ['/api/create/ProjectTask', `{"name":"x","stage":${deepObject(100_000)}}`],
      ['/api/query/ProjectTask', `{"fields":${deepArray(MAX_JSON_DEPTH)}}`],
      ['/api/create/ProjectTask', `{"name":"x","subtasks":[${'{"name":"s","subtasks":['.repeat(5_000)}${']}'.repeat(5_000)}]}`],
    ];
    for (const [url, payload] of cases) {
      const res = await send(app, 'POST', url, payload);
      expect(res.statusCode, `${url} ${payload.slice(0, 40)}`).toBe(400);
      expect(res.json()).toEqual({ detail, error: 'BadRequest' });
    }
    // Nesting within the bound is ordinary input.
    const ok = await send(app, 'POST', '/api/query/ProjectTask', `{"filter_str":"Q(id=0)","x":${deepArray(MAX_JSON_DEPTH - 1)}}`);
    expect(ok.statusCode, ok.body).toBe(200);
    const count = await send(app, 'POST', '/api/query/ProjectTask', JSON.stringify({ counter: true }));
    expect(count.json().count).toBe(0);
  });

  it('an unknown route is a 404 {detail, error}', async () => {
    const outside = await app.inject({ method: 'GET', url: '/no/such/page?x=1' });
    expect(outside.statusCode).toBe(404);
    expect(outside.json()).toEqual({ detail: 'No route GET /no/such/page', error: 'NotFound' });
    const api = await send(app, 'GET', '/api/no/such/route');
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ detail: 'No route GET /api/no/such/route', error: 'NotFound' });
    const wrongMethod = await send(app, 'GET', '/api/query/ProjectTask');
    expect(wrongMethod.statusCode).toBe(404);
    expect(wrongMethod.json()).toEqual({ detail: 'No route GET /api/query/ProjectTask', error: 'NotFound' });
  });

  it('a body that is not JSON is a 415', async () => {
    const res = await send(app, 'POST', '/api/query/ProjectTask', 'name=x', 'application/x-www-form-urlencoded');
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ error: 'UnsupportedMediaType', detail: expect.any(String) });
    expect(Object.keys(res.json()).sort()).toEqual(['detail', 'error']);
  });

  it('a body over the configured limit is a 413', async () => {
    const res = await send(smallApp, 'POST', '/api/create/ProjectTask', JSON.stringify({ name: 'x'.repeat(2048) }));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ detail: 'The request body is larger than the configured limit (FF_BODY_LIMIT)', error: 'PayloadTooLarge' });
    const count = await send(app, 'POST', '/api/query/ProjectTask', JSON.stringify({ counter: true }));
    expect(count.json().count).toBe(0);
  });

  it('carries a traceback only in dev mode', async () => {
    const prod = await send(app, 'POST', '/api/query/ProjectTask', JSON.stringify({ filter_str: 'Q(nope=1)' }));
    expect(prod.statusCode).toBe(400);
    expect(prod.json()).toEqual({ detail: "Unknown field 'nope' on model ProjectTask (at position 2)", error: 'QuerySyntaxError' });
    const dev = await t.api('POST', '/api/query/ProjectTask', { filter_str: 'Q(nope=1)' });
    expect(dev.statusCode).toBe(400);
    expect(dev.json()).toEqual({
      detail: "Unknown field 'nope' on model ProjectTask (at position 2)", error: 'QuerySyntaxError', traceback: expect.stringContaining('QuerySyntaxError'),
    });
  });

  it('a record that does not exist is a 404 and a validation error a 400, with exact bodies', async () => {
    const missing = await send(app, 'POST', '/api/fetch/ProjectTask/123456', '{}');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: 'ProjectTask 123456 does not exist', error: 'NotFound' });
    const invalid = await send(app, 'POST', '/api/create/ProjectTask', '{}');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({ detail: "Field 'name' of Task is required", error: 'ValidationError', field: 'name' });
  });
});
