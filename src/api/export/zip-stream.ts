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

export class ZipStream {
  /** The archive's bytes as they are produced. */
  readonly output = new PassThrough({ highWaterMark: 64 * 1024 });
  private readonly entries: CentralEntry[] = [];
  private readonly time: number;
  private readonly date: number;
  private offset = 0;
  private open: { entry: CentralEntry; deflate: zlib.DeflateRaw; done: Promise<void> } | null = null;

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
    this.open = { entry, deflate, done };
  }

  /** Appends data to the open entry; resolves when there is room for more (backpressure). */
  async write(data: Buffer): Promise<void> {
    const { entry, deflate } = this.open!;
    entry.crc = zlib.crc32(data, entry.crc);
    entry.size += data.length;
    if (entry.size > LIMIT_32) throw new Error('A ZIP entry past 4 GiB needs ZIP64, which this writer does not write');
    if (!deflate.write(data)) await settled(deflate, 'drain');
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

/** Resolves on `event`, or when the stream is closed meanwhile (destroyed: a client gone). */
function settled(stream: NodeJS.EventEmitter, event: string): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off(event, done).off('close', done);
      resolve();
    };
    stream.on(event, done).on('close', done);
  });
}
