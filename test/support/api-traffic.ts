/**
 * Steady API traffic against one database, for tests that change the database under load
 * (upgrades): requests fire at a fixed rate whether or not earlier ones have answered, as
 * independent clients would, and every answer is kept for the test to judge.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface TrafficRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
}

export interface TrafficAnswer {
  request: TrafficRequest;
  status: number;
  retryAfter: string | undefined;
  body: string;
}

export interface TrafficOptions {
  /** Workers (apps) the requests are spread over, each with its own memory of credentials. */
  workers: readonly FastifyInstance[];
  database: string;
  /** The API keys requests pick from, at random. */
  keys: () => readonly string[];
  /** The next request to send (called once per tick). */
  next: () => TrafficRequest;
  /** Requests per second. */
  rate: number;
}

export class ApiTraffic {
  readonly answers: TrafficAnswer[] = [];
  readonly #pending = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: TrafficOptions) {}

  start(): void {
    this.#timer = setInterval(() => this.#fire(), Math.round(1000 / this.options.rate));
  }

  /** Stops sending and waits for every request already sent. */
  async stop(): Promise<TrafficAnswer[]> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    while (this.#pending.size) await Promise.all([...this.#pending]);
    return this.answers;
  }

  /** Answers whose status is neither 200 nor a 503 with `Retry-After: 5`. */
  unexpected(): TrafficAnswer[] {
    return this.answers.filter((a) => !(a.status === 200 || (a.status === 503 && a.retryAfter === '5')));
  }

  count(status: number): number {
    return this.answers.filter((a) => a.status === status).length;
  }

  #fire(): void {
    const { workers, keys, next, database } = this.options;
    const request = next();
    const pool = keys();
    const key = pool[Math.floor(Math.random() * pool.length)]!;
    const worker = workers[Math.floor(Math.random() * workers.length)]!;
    const sent = worker.inject({
      method: request.method,
      url: request.url,
      headers: {
        authorization: `Bearer ${key}`, 'x-db-name': database,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
    }).then((res: LightMyRequestResponse) => {
      const retryAfter = res.headers['retry-after'];
      this.answers.push({ request, status: res.statusCode, retryAfter: retryAfter === undefined ? undefined : String(retryAfter), body: res.body });
    }, (error: unknown) => {
      this.answers.push({ request, status: -1, retryAfter: undefined, body: String(error) });
    });
    const tracked = sent.finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }
}
