/**
 * POST /api/import-preview/{model} (CONTRACTS C3): a `multipart/form-data` upload — a `file`
 * (XLSX or CSV) and `has_header` (`true` by default; `false`/`0`/`no` say the first row is data),
 * in either order — answered `{headers, rows, suggested_fields}` by the model service
 * (`src/api/import-preview/`). The file is read as it streams in and parsed only as far as the
 * preview needs; the rest is read and dropped, never held. Multipart parsing is registered in
 * this route's own plugin scope, so no other route accepts uploads.
 *
 * Refusals: not multipart, no `file`, an empty, damaged or unknown file → 400; a file over
 * `maxFileBytes` (100 MiB by default) → 400 naming the limit; unknown model → 404; no read right
 * → 403 (checked before the upload is read). Other fields (`progress_id`) are the import's.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertRight } from '../../access/record-access.js';
import { importPreview, PREVIEW_ROWS, type Cell } from '../../api/import-preview/import-preview.js';
import { readSheet } from '../../api/import-preview/read-sheet.js';
import { BadRequest, FieldForgeError } from '../../errors.js';
import { readOnlyWork } from '../request-context.js';

/** Largest file a preview reads (`maxFileBytes`). */
export const DEFAULT_IMPORT_PREVIEW_MAX_BYTES = 100 * 1024 * 1024;

export interface ImportPreviewRoutesOptions {
  /** Most records a selection may cover (`FF_BULK_MAX`); a preview selects none. */
  bulkMax?: number;
  /** Largest uploaded file read, in bytes (default 100 MiB). */
  maxFileBytes?: number;
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

export function registerImportPreviewRoutes(app: FastifyInstance, options: ImportPreviewRoutesOptions = {}): void {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_IMPORT_PREVIEW_MAX_BYTES;
  void app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: maxFileBytes, files: 1, fields: 10, fieldSize: 1024, parts: 12 } });
    // Any other body reaches the handler, which answers 400 (not Fastify's 415).
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    scope.post('/api/import-preview/:model', async (req) => {
      const ctx = req.ff!;
      const meta = ctx.registry.meta((req.params as { model: string }).model);
      assertRight(meta, 'read', ctx.access);
      const upload = await readUpload(req, maxFileBytes);
      return readOnlyWork(req, () => importPreview(meta, upload.sheet, upload.hasHeader, { acceptLanguage: req.headers['accept-language'] ?? null }));
    });
  });
}

async function readUpload(req: FastifyRequest, maxFileBytes: number): Promise<{ sheet: Cell[][]; hasHeader: boolean }> {
  if (!req.isMultipart()) throw new BadRequest("Send the file as multipart/form-data: a 'file' part and, optionally, 'has_header'");
  let hasHeader = true;
  let sheet: Cell[][] | null = null;
  let failure: unknown = null;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || sheet !== null || failure !== null) {
          // Read to its end all the same: the parts after it are still to come.
          for await (const _ of part.file);
          failure ??= new BadRequest("Send one file, in the part named 'file'");
          continue;
        }
        try {
          // The header row and the preview's data rows, whether or not a header is declared later.
          sheet = await readSheet(part.file, part.filename, PREVIEW_ROWS + 1);
        } catch (err) {
          failure = err;
        }
        if (part.file.truncated) throw tooLarge(maxFileBytes);
      } else if (part.fieldname === 'has_header') {
        const value = String(part.value).trim().toLowerCase();
        if (!TRUE.has(value) && !FALSE.has(value)) throw new BadRequest("'has_header' must be true or false");
        hasHeader = TRUE.has(value);
      }
    }
  } catch (err) {
    if (err instanceof FieldForgeError) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(maxFileBytes);
    if (code === 'FST_FILES_LIMIT') throw new BadRequest("Send one file, in the part named 'file'");
    if (typeof code === 'string' && code.startsWith('FST_')) throw new BadRequest(`The upload cannot be read: ${(err as Error).message}`);
    throw err;
  }
  if (failure !== null) throw failure;
  if (sheet === null) throw new BadRequest("No file: send it in the multipart part named 'file'");
  return { sheet, hasHeader: hasHeader };
}

function tooLarge(maxFileBytes: number): BadRequest {
  return new BadRequest(`The file is larger than ${Math.round(maxFileBytes / (1024 * 1024))} MiB, the most an import preview reads`);
}
