/** The entries of a ZIP, read with yauzl (an independent reader of what yazl wrote): name, UTF-8 flag, bytes. */
import { fromBuffer, type Entry } from 'yauzl';

export interface ZipEntryRead {
  name: string;
  /** General-purpose bit 11: the name is UTF-8. */
  utf8: boolean;
  body: Buffer;
}

export function zipEntries(zip: Buffer): Promise<ZipEntryRead[]> {
  return new Promise((resolve, reject) => {
    fromBuffer(zip, { lazyEntries: true, decodeStrings: true }, (err, file) => {
      if (err || !file) return reject(err ?? new Error('not a zip'));
      const out: ZipEntryRead[] = [];
      file.on('error', reject);
      file.on('end', () => resolve(out));
      file.on('entry', (entry: Entry) => {
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            out.push({ name: entry.fileName, utf8: (entry.generalPurposeBitFlag & 0x800) !== 0, body: Buffer.concat(chunks) });
            file.readEntry();
          });
        });
      });
      file.readEntry();
    });
  });
}
