/**
 * What the bare `node:http` + `pg` yardsticks of the benchmarks share (bare-server.ts,
 * bare-orders-server.ts, bare-effects-server.ts): the environment, a pool counting the statements
 * it runs, the bearer key checked in memory, a JSON body, and the server itself — `GET /__cpu`
 * (this process's CPU time, the statements run and the `/api/` requests received so far), errors
 * as `{error}`, the port printed as `{"ready":true,"port":…}` once listening (PORT, 0 = any free
 * port), stopped by SIGTERM or SIGINT.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const DATE_OID = 1082;

export function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export interface CountingPool {
  pool: pg.Pool;
  /** Runs a statement, named (prepared once per connection) unless `prepared` is false. */
  query<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]): Promise<pg.QueryResult<R>>;
  readonly statements: number;
}

/**
 * A pool of 10 on BENCH_DB_URL. `datesAsText`: a date stays its `YYYY-MM-DD` text, as FieldForge
 * answers it.
 */
export function countingPool(options: { applicationName: string; prepared?: boolean; datesAsText?: boolean }): CountingPool {
  const pool = new pg.Pool({
    connectionString: env('BENCH_DB_URL'),
    max: 10,
    application_name: options.applicationName,
    ...(options.datesAsText ? {
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === DATE_OID ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
      },
    } : {}),
  });
  pool.on('error', () => {});
  const prepared = options.prepared ?? true;
  let statements = 0;
  return {
    pool,
    query<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) {
      statements++;
      return pool.query<R>(prepared ? { name, text, values } : { text, values });
    },
    get statements() {
      return statements;
    },
  };
}

/** SHA-256 of the request's bearer key (401 without one). */
export function bearerDigest(req: http.IncomingMessage): Buffer {
  const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
  if (!m) throw new HttpError(401, 'Missing credential');
  return createHash('sha256').update(m[1]!).digest();
}

/** Whether `digest` is the key hashed as `hash` (constant time). */
export function sameKey(digest: Buffer, hash: Buffer): boolean {
  return digest.length === hash.length && timingSafeEqual(digest, hash);
}

export function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (!text) return resolve({});
      try {
        const body = JSON.parse(text) as unknown;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) return reject(new HttpError(400, 'Body must be an object'));
        resolve(body as Record<string, unknown>);
      } catch {
        reject(new HttpError(400, 'The request body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

function send(res: http.ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Serves `handle` (its value answered as JSON with 200, an HttpError with its status, else 500). */
export function serve(db: CountingPool, handle: (req: http.IncomingMessage) => Promise<unknown>): void {
  let served = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/api/')) served++;
    const answer = req.method === 'GET' && req.url === '/__cpu'
      ? Promise.resolve({ ...process.cpuUsage(), statements: db.statements, served })
      : handle(req);
    answer.then(
      (result) => send(res, 200, result),
      (err: unknown) => send(res, err instanceof HttpError ? err.status : 500, { error: err instanceof Error ? err.message : String(err) }),
    );
  });
  server.keepAliveTimeout = 72_000;
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const address = server.address();
    console.log(JSON.stringify({ ready: true, port: typeof address === 'object' && address ? address.port : 0 }));
  });
  const stop = (): void => {
    server.close();
    db.pool.end().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
