/**
 * A `Report` row, found by its qualified identifier (`sales.report_sale_order`) and read as the
 * platform: which reports exist is module configuration, and the caller's right that matters is
 * the read right on the records printed. Its template lives in the directory of the module that
 * the identifier names.
 */
import { NotFound, UserError } from '../errors.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';

export type ReportFormat = 'pdf' | 'html';

export interface ReportDefinition {
  readonly identifier: string;
  readonly name: string;
  /** The model it prints. */
  readonly model: string;
  /** Path of the template inside `moduleDir`. */
  readonly template: string;
  /** Filename template without extension (null: the report's name). */
  readonly filename: string | null;
  readonly format: ReportFormat;
  readonly moduleDir: string;
}

const REPORT_MODEL = 'Report';

export async function findReport(identifier: string): Promise<ReportDefinition> {
  const { registry } = currentEnv();
  const missing = () => new NotFound(`Report '${identifier.slice(0, 120)}' does not exist`);
  if (!registry.has(REPORT_MODEL)) throw missing();
  const [row] = await withEnv({ su: true }, () =>
    new QuerySet(registry.meta(REPORT_MODEL)).filter({ identifier }).read(['identifier', 'name', 'model', 'template', 'filename', 'format']));
  if (!row) throw missing();
  const module = identifier.split('.')[0]!;
  const moduleDir = registry.moduleDirs.get(module);
  if (!identifier.includes('.') || !moduleDir) {
    throw new UserError(`Report '${identifier}' names no installed module holding its template: its identifier must start with that module ('sales.report_…')`);
  }
  return {
    identifier,
    name: String(row.name),
    model: String(row.model),
    template: String(row.template),
    filename: typeof row.filename === 'string' && row.filename.trim() ? row.filename : null,
    format: row.format === 'html' ? 'html' : 'pdf',
    moduleDir,
  };
}
