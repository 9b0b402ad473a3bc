/**
 * Sockets whose frames the messaging bench times (`messaging-bench.ts` (b)): each socket is opened
 * with its own headers and waits for its `hello`; `fanOut` sends one request and waits until every
 * socket received a frame carrying the request's marker (a text unique to that post), or 5 s.
 * Frames without the marker (presence, hellos of others) are ignored without being decoded.
 */
import { request as httpRequest } from 'node:http';
import { WebSocket, type RawData } from 'ws';

/** Upgrades in flight at once while opening the sockets. */
const OPENING = 100;
const TIMEOUT_MS = 5_000;

export interface FanOut {
  /** Per-socket latency from the request's send to the marked frame, ms, over every post. */
  latencies: number[];
  missed: number;
  /** When the request was answered, ms from its send. */
  requestMs: number[];
  /** Marked frames that arrived after their post's 5 s (counted missing too). */
  late: number;
  /** Posts of which some socket got no frame in time: `marker: missing`. */
  incomplete: string[];
  /** Per post: when it was answered, its first and its last frame (ms from its send). */
  posts: { requestMs: number; first: number; last: number }[];
}

export const emptyFanOut = (): FanOut => ({ latencies: [], missed: 0, requestMs: [], late: 0, incomplete: [], posts: [] });

function openSocket(url: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    const timer = setTimeout(() => reject(new Error('no hello within 30 s')), 30_000);
    const onHello = (data: RawData) => {
      if (!data.toString().includes('"hello"')) return;
      clearTimeout(timer);
      ws.off('message', onHello);
      resolve(ws);
    };
    ws.on('message', onHello);
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`upgrade answered ${res.statusCode}`));
    });
  });
}

export class FanOutProbe {
  readonly sockets: WebSocket[] = [];
  #marker: string | null = null;
  #t0 = 0;
  #seen = new Set<number>();
  #arrivals: number[] = [];
  #allIn: (() => void) | null = null;
  /** The last posts' markers and where their late frames are counted. */
  #past: { marker: string; into: FanOut }[] = [];

  /**
   * Opens one socket per entry of `headers` to `url`, OPENING at a time; each sends `first` once
   * it has its hello (a heartbeat: a person's socket silent for 35 s goes offline for presence).
   */
  async open(url: string, headers: readonly Record<string, string>[], first?: unknown): Promise<void> {
    for (let i = 0; i < headers.length; i += OPENING) {
      const batch = await Promise.all(headers.slice(i, i + OPENING).map((h) => openSocket(url, h)));
      for (const ws of batch) {
        const index = this.sockets.push(ws) - 1;
        ws.on('message', (data) => this.#frame(index, data));
        if (first !== undefined) ws.send(JSON.stringify(first));
      }
    }
  }

  /** Sends `frame` on every socket (heartbeats). */
  sendAll(frame: unknown): void {
    const text = JSON.stringify(frame);
    for (const ws of this.sockets) if (ws.readyState === WebSocket.OPEN) ws.send(text);
  }

  /** One request (`send`), then every socket's frame carrying `marker`: latencies into `m`. */
  async fanOut(marker: string, send: () => Promise<void>, m: FanOut): Promise<void> {
    this.#marker = marker;
    this.#seen = new Set();
    this.#arrivals = [];
    const allIn = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, TIMEOUT_MS);
      this.#allIn = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#t0 = performance.now();
    await send();
    m.requestMs.push(performance.now() - this.#t0);
    await allIn;
    this.#marker = null;
    this.#allIn = null;
    m.latencies.push(...this.#arrivals);
    m.posts.push({ requestMs: m.requestMs.at(-1)!, first: Math.min(...this.#arrivals), last: Math.max(...this.#arrivals) });
    const missing = this.sockets.length - this.#seen.size;
    m.missed += missing;
    if (missing) m.incomplete.push(`${marker}: ${missing}`);
    this.#past = [{ marker, into: m }, ...this.#past.slice(0, 2)];
  }

  close(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  #frame(index: number, data: RawData): void {
    if (this.#past.length) this.#lateFrame(data);
    if (this.#marker === null || this.#seen.has(index)) return;
    const at = performance.now();
    if (!data.toString().includes(this.#marker)) return;
    this.#seen.add(index);
    this.#arrivals.push(at - this.#t0);
    if (this.#seen.size === this.sockets.length) this.#allIn?.();
  }

  #lateFrame(data: RawData): void {
    const text = data.toString();
    const late = this.#past.find((p) => text.includes(p.marker));
    if (late) late.into.late++;
  }
}

/**
 * A POST on a connection of its own (`Connection: close`): the posts of the bench reach each
 * server seconds apart, after its keep-alive timeout, and a reused connection the server is closing
 * just then fails with ECONNRESET. Answers the status and the body.
 */
export function postOnce(port: number, path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Waits until the FieldForge servers on `ports` (bench/fieldforge-server.ts, `GET /__cpu`) each
 * use under 5 % of a core for two seconds in a row — the presence frames of everyone who came
 * online delivered — or `maxMs`; answers how long it waited.
 */
export async function untilIdle(ports: readonly number[], maxMs = 120_000): Promise<number> {
  const cpu = async (port: number) => {
    const res = await fetch(`http://127.0.0.1:${port}/__cpu`);
    const { user, system } = (await res.json()) as { user: number; system: number };
    return user + system;
  };
  const start = performance.now();
  let quiet = 0;
  let last = await Promise.all(ports.map(cpu));
  let at = performance.now();
  while (quiet < 2 && performance.now() - start < maxMs) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = await Promise.all(ports.map(cpu));
    const elapsedUs = (performance.now() - at) * 1000;
    quiet = now.every((used, i) => (used - last[i]!) / elapsedUs < 0.05) ? quiet + 1 : 0;
    last = now;
    at = performance.now();
  }
  return performance.now() - start;
}
