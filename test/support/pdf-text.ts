/**
 * The text of a PDF as Debian's `pdftotext` (poppler-utils) reads it: an independent reader, so a
 * test proves the document holds real text, not just that our code produced bytes.
 */
import { spawn } from 'node:child_process';

export function pdfText(pdf: Buffer, options: { layout?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('pdftotext', [...(options.layout ? ['-layout'] : []), '-enc', 'UTF-8', '-', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`pdftotext exited with ${code}: ${err}`))));
    child.stdin.end(pdf);
  });
}

/** How many pages `pdfinfo` counts. */
export function pdfPages(pdf: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('pdfinfo', ['-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const pages = /^Pages:\s+(\d+)/m.exec(out);
      if (code === 0 && pages) resolve(Number(pages[1]));
      else reject(new Error(`pdfinfo exited with ${code}: ${out}`));
    });
    child.stdin.end(pdf);
  });
}

/** Text compared without the layout's spacing: no-break and narrow no-break spaces as plain spaces, runs of blanks collapsed. */
export function plain(text: string): string {
  return text.replace(/[\u00a0\u202f]/g, ' ').replace(/[ \t]+/g, ' ');
}
