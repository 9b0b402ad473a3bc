/**
 * A ZIP of several rendered documents (a report of several records), written with yazl: entries
 * in the records' order, UTF-8 names (yazl marks every name with the language-encoding flag, so
 * `Commande Référence.pdf` extracts as such), PDFs stored as they are (they are compressed
 * already; deflating them again costs time for nothing), HTML deflated.
 */
import { ZipFile } from 'yazl';

export interface ZipEntry {
  readonly name: string;
  readonly body: Buffer;
  readonly compress: boolean;
}

export function zipDocuments(entries: readonly ZipEntry[], mtime: Date = new Date()): Promise<Buffer> {
  const zip = new ZipFile();
  for (const entry of entries) zip.addBuffer(entry.body, entry.name, { compress: entry.compress, mtime });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}
