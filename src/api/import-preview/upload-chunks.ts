/**
 * An uploaded file as the preview readers take it: its bytes in pieces of at most 64 KiB (a client
 * or `inject` may deliver one huge chunk; parsing and decoding then stay bounded too), the first
 * bytes available for sniffing before anyone reads, and `drain()` to discard whatever nobody read.
 * The source is never destroyed: its end is what lets the rest of a multipart request be read.
 */
import type { Readable } from 'node:stream';

const PIECE = 64 * 1024;

export class UploadChunks implements AsyncIterable<Buffer> {
  readonly #pieces: AsyncGenerator<Buffer>;
  /** Pieces read ahead by `peek`, handed out again first. */
  readonly #replay: Buffer[] = [];

  constructor(source: Readable) {
    this.#pieces = split(source);
  }

  /** Up to `bytes` first bytes (fewer when the file is shorter), read again by the next consumer. */
  async peek(bytes: number): Promise<Buffer> {
    let have = this.#replay.reduce((n, b) => n + b.length, 0);
    while (have < bytes) {
      const step = await this.#pieces.next();
      if (step.done) break;
      this.#replay.push(step.value);
      have += step.value.length;
    }
    return Buffer.concat(this.#replay).subarray(0, bytes);
  }

  async next(): Promise<IteratorResult<Buffer, undefined>> {
    const replayed = this.#replay.shift();
    if (replayed) return { done: false, value: replayed };
    return this.#pieces.next();
  }

  /** Reads the rest of the upload and throws it away. */
  async drain(): Promise<void> {
    this.#replay.length = 0;
    while (!(await this.#pieces.next()).done);
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return { next: () => this.next() };
  }
}

async function* split(source: Readable): AsyncGenerator<Buffer> {
  // Not destroyed when a consumer stops early: the multipart parser must see the file part end.
  for await (const chunk of source.iterator({ destroyOnReturn: false })) {
    const buf = chunk as Buffer;
    for (let at = 0; at < buf.length; at += PIECE) yield buf.subarray(at, at + PIECE);
  }
}

/**
 * `source` until `enough()` says so, then the rest of it read and dropped unseen: the consumer's
 * parser ends early while the underlying stream still reaches its end.
 */
export async function* until<T>(source: AsyncIterable<T>, enough: () => boolean): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  for (;;) {
    if (enough()) {
      while (!(await it.next()).done);
      return;
    }
    const step = await it.next();
    if (step.done) return;
    yield step.value;
  }
}
