/**
 * A real WebSocket client (`ws`) for the realtime socket tests: opens `/api/ws`, records every
 * frame it receives, and waits for frames or for the close. `refusal` answers the HTTP status
 * of an upgrade the server refused; `attempt`, the close of a socket it accepted and then refused.
 */
import WebSocket from 'ws';

export interface Frame {
  type: string;
  data: Record<string, any>;
  [field: string]: any;
}

export class TestSocket {
  readonly frames: Frame[] = [];
  /** When each frame arrived (epoch ms), by index. */
  readonly arrivedAt: number[] = [];
  closed: { code: number; reason: string } | null = null;
  /** `X-FF-Worker` of the upgrade answer: which worker holds the socket. */
  worker = '';
  readonly #waiters = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()) as Frame);
      this.arrivedAt.push(Date.now());
      this.#wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.#wake();
    });
    ws.on('upgrade', (res) => (this.worker = String(res.headers['x-ff-worker'] ?? '')));
  }

  /** Opens a socket and waits for its `hello` (or the first frame `first` matches: a visitor's `history`). */
  static async open(url: string, headers: Record<string, string> = {}, first: (f: Frame) => boolean = (f) => f.data?.event === 'hello'): Promise<TestSocket> {
    const socket = new TestSocket(new WebSocket(url, { headers }));
    await new Promise<void>((resolve, reject) => {
      socket.ws.once('open', () => resolve());
      socket.ws.once('error', reject);
      socket.ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    await socket.next(first);
    return socket;
  }

  /**
   * Opens a socket the server may accept and then close before its `hello` (a limit): the socket
   * once it said `hello`, else the frames it got and its close code.
   */
  static async attempt(url: string, headers: Record<string, string> = {}): Promise<TestSocket | { frames: Frame[]; code: number }> {
    const socket = new TestSocket(new WebSocket(url, { headers }));
    await new Promise<void>((resolve, reject) => {
      socket.ws.once('open', () => resolve());
      socket.ws.once('error', reject);
      socket.ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    await socket.until(() => socket.closed !== null || socket.frames.some((f) => f.data?.event === 'hello'), 5_000, 'hello or close');
    return socket.closed ? { frames: socket.frames, code: socket.closed.code } : socket;
  }

  /** The status and body of a refused upgrade. */
  static refusal(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        ws.close();
        reject(new Error('the upgrade was accepted'));
      });
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body ? JSON.parse(body) : null }));
      });
      ws.once('error', () => undefined);
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame received (so far or later) matching `match`. */
  async next(match: (f: Frame) => boolean, ms = 5_000): Promise<Frame> {
    let found: Frame | undefined;
    await this.until(() => (found = this.frames.find(match)) !== undefined, ms, 'frame');
    return found!;
  }

  /** Frames of `realtime_data` with this event. */
  events(event: string): Record<string, any>[] {
    return this.frames.filter((f) => f.type === 'realtime_data' && f.data.event === event).map((f) => f.data);
  }

  async closedWith(ms = 6_000): Promise<{ code: number; reason: string }> {
    await this.until(() => this.closed !== null, ms, 'close');
    return this.closed!;
  }

  async until(done: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${ms} ms; frames: ${JSON.stringify(this.frames).slice(0, 2000)}; closed: ${JSON.stringify(this.closed)}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 100));
        this.#waiters.add(wake);
      });
    }
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.ws.close();
    return this.closedWith().then(() => undefined);
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }
}
