/**
 * A ZIP written as a stream, for the XLSX export: small entries from buffers, and one large entry
 * deflated as its data arrives (sizes and CRC in a data descriptor after it, PKWARE APPNOTE §4.3.9).
 *
 * Why not yazl, which the reports use: yazl checks every byte with a CRC-32 in JavaScript
 * (buffer-crc32) and passes each chunk through five stream transforms; at 100,000 rows that CRC
 * alone was a sixth of the export's CPU. Here the CRC is zlib's native `crc32` (Node ≥ 20.15) and
 * the data goes through one deflate stream. No ZIP64: an entry or archive past 4 GiB fails the
 * stream instead of writing a file no one can open (far beyond one worksheet of usual width).
 */
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';

const LIMIT_32 = 0xffff_ffff;
/** General purpose flags: bit 11, names are UTF-8; bit 3, sizes follow the data. */
const UTF8 = 0x0800;
const DATA_DESCRIPTOR = 0x0008;
const DEFLATE = 8;

interface CentralEntry {
  name: Buffer;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
}

/** The entry being written: its deflate stream, and the text buffers it reuses (`writeText`). */
interface OpenEntry {
  entry: CentralEntry;
  deflate: zlib.DeflateRaw;
  done: Promise<void>;
  /** Buffers the deflate stream has consumed, ready for the next text. */
  spare: Buffer[];
  /** Consumption of the last text handed to the deflate stream. */
  inFlight: Promise<void> | null;
  /** Wakes the writes not consumed yet (at most two). */
  waiting: Set<() => void>;
}

/** Bytes of a text buffer at the least (a chunk of XML is about 64 K characters). */
const MIN_TEXT_BUFFER = 256 * 1024;

export class ZipStream {
  /** The archive's bytes as they are produced. */
  readonly output = new PassThrough({ highWaterMark: 64 * 1024 });
  private readonly entries: CentralEntry[] = [];
  private readonly time: number;
  private readonly date: number;
  private offset = 0;
  private open: OpenEntry | null = null;

  constructor(mtime: Date = new Date()) {
    // MS-DOS time and date, local to no zone: the UTC fields, as yazl does.
    this.time = (mtime.getUTCHours() << 11) | (mtime.getUTCMinutes() << 5) | (mtime.getUTCSeconds() >> 1);
    this.date = ((Math.max(1980, mtime.getUTCFullYear()) - 1980) << 9) | ((mtime.getUTCMonth() + 1) << 5) | mtime.getUTCDate();
  }

  /** A whole entry from a buffer, deflated at once. */
  addBuffer(name: string, data: Buffer, level = 6): void {
    const compressed = zlib.deflateRawSync(data, { level });
    const entry = this.header(name, UTF8, zlib.crc32(data), compressed.length, data.length);
    this.push(compressed);
    this.entries.push(entry);
  }

  /**
   * Starts an entry whose data comes in pieces (`write`), deflated as it comes. Only one at a
   * time, closed by `closeEntry`.
   */
  openEntry(name: string, level: number): void {
    if (this.open) throw new Error('A ZIP entry is already open');
    const entry = this.header(name, UTF8 | DATA_DESCRIPTOR, 0, 0, 0);
    const deflate = zlib.createDeflateRaw({ level });
    deflate.on('data', (chunk: Buffer) => (entry.compressedSize += chunk.length));
    deflate.pipe(this.output, { end: false });
    const done = new Promise<void>((resolve, reject) => {
      deflate.once('end', resolve);
      deflate.once('error', reject);
    });
    done.catch(() => {});
    const open: OpenEntry = { entry, deflate, done, spare: [], inFlight: null, waiting: new Set() };
    deflate.once('close', () => {
      for (const wake of [...open.waiting]) wake();
    });
    this.open = open;
  }

  /**
   * Appends text (as UTF-8) to the open entry; resolves when there is room for more: once the
   * deflate stream has consumed the text before this one, which it does only while the output is
   * read (backpressure). The text is encoded into one of two buffers the entry reuses in turn —
   * a new buffer per chunk made an export's every byte garbage whose memory outlived it: with 20
   * exports at once, 60 MiB of buffers waited for the collector and left glibc's heap that much
   * larger for good (issue 25).
   */
  async writeText(text: string): Promise<void> {
    const open = this.open!;
    const { entry, deflate } = open;
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    let buffer = open.spare.pop();
    if (!buffer || buffer.length < 3 * text.length) buffer = Buffer.allocUnsafeSlow(Math.max(3 * text.length, MIN_TEXT_BUFFER));
    const data = buffer.subarray(0, buffer.write(text, 'utf8'));
    entry.crc = zlib.crc32(data, entry.crc);
    entry.size += data.length;
    if (entry.size > LIMIT_32) throw new Error('A ZIP entry past 4 GiB needs ZIP64, which this writer does not write');
    const consumed = new Promise<void>((resolve) => {
      // A destroyed stream never calls back a write it had not consumed: closing wakes it too.
      const wake = () => {
        open.waiting.delete(wake);
        resolve();
      };
      open.waiting.add(wake);
      deflate.write(data, () => {
        open.spare.push(buffer);
        wake();
      });
    });
    const previous = open.inFlight;
    open.inFlight = consumed;
    if (previous) await previous;
    if (deflate.destroyed) throw new Error('The ZIP entry was closed before its end');
  }

  /** Ends the open entry: the rest of its deflated data, then its sizes and CRC. */
  async closeEntry(): Promise<void> {
    const { entry, deflate, done } = this.open!;
    deflate.end();
    await done;
    this.open = null;
    this.offset += entry.compressedSize;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(entry.crc, 4);
    descriptor.writeUInt32LE(entry.compressedSize, 8);
    descriptor.writeUInt32LE(entry.size, 12);
    this.push(descriptor);
    this.entries.push(entry);
  }

  /** The central directory and its end record; the output then ends. */
  finish(): void {
    const start = this.offset;
    for (const e of this.entries) {
      const header = Buffer.alloc(46);
      header.writeUInt32LE(0x02014b50, 0);
      header.writeUInt16LE(20, 4); // made by: version 2.0
      header.writeUInt16LE(20, 6); // needed: 2.0 (deflate)
      header.writeUInt16LE(e.flags, 8);
      header.writeUInt16LE(DEFLATE, 10);
      header.writeUInt16LE(this.time, 12);
      header.writeUInt16LE(this.date, 14);
      header.writeUInt32LE(e.crc, 16);
      header.writeUInt32LE(e.compressedSize, 20);
      header.writeUInt32LE(e.size, 24);
      header.writeUInt16LE(e.name.length, 28);
      header.writeUInt32LE(e.offset, 42);
      this.push(Buffer.concat([header, e.name]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.offset - start, 12);
    end.writeUInt32LE(start, 16);
    this.push(end);
    this.output.end();
  }

  /** Stops: the output fails (a reader sees an error, not a short archive). */
  destroy(error: Error): void {
    this.open?.deflate.destroy(error);
    this.output.destroy(error);
  }

  private header(name: string, flags: number, crc: number, compressedSize: number, size: number): CentralEntry {
    const encoded = Buffer.from(name, 'utf8');
    const entry: CentralEntry = { name: encoded, flags, crc, compressedSize, size, offset: this.offset };
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(flags, 6);
    header.writeUInt16LE(DEFLATE, 8);
    header.writeUInt16LE(this.time, 10);
    header.writeUInt16LE(this.date, 12);
    header.writeUInt32LE(crc, 14);
    header.writeUInt32LE(compressedSize, 18);
    header.writeUInt32LE(size, 22);
    header.writeUInt16LE(encoded.length, 26);
    this.push(Buffer.concat([header, encoded]));
    return entry;
  }

  private push(data: Buffer): void {
    if (this.offset + data.length > LIMIT_32) throw new Error('A ZIP archive past 4 GiB needs ZIP64, which this writer does not write');
    this.offset += data.length;
    this.output.write(data);
  }
}
