/**
 * A report's template: its HTML file in the module directory, parsed by LiquidJS with output
 * escaping on (`{{ record.customer.name }}` writes `&lt;script&gt;` for a customer named
 * `<script>`; `| raw` is the only way out), strict filters (a misspelt filter is an error, not an
 * empty string) and a render time limit. Partials (`{% render 'reports/line' %}`) are looked up in
 * the same module directory. The filename template is rendered by a second engine without HTML
 * escaping (a name is not HTML: `R&D` stays `R&D`).
 *
 * Parsed templates are kept per file and re-parsed when the file changes (a module upgrade), so a
 * report costs no parse once warm. The data paths the template reads are found once per parse
 * (`template-variables.ts`).
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { Liquid, Template } from 'liquidjs';
import { UserError } from '../errors.js';
import { liquidJs } from './liquidjs.js';
import { registerReportFilters } from './report-filters.js';
import { templateVariables, type Segments } from './template-variables.js';

/** The globals a template reads: the record, its company, the calling user (`lang` and `dir` are plain values). */
export const DATA_ROOTS = ['record', 'company', 'user'] as const;

/** Longest one document's render may take, milliseconds (a runaway loop ends as an error). */
const RENDER_LIMIT_MS = 20_000;

export interface ParsedTemplate {
  readonly liquid: Liquid;
  readonly templates: Template[];
  /** Variable paths rooted at `record`, `company` or `user`, aliases resolved. */
  readonly variables: readonly Segments[];
}

const engines = new Map<string, Liquid>();
const parsed = new Map<string, { mtimeMs: number; size: number; template: ParsedTemplate }>();
/** Made on first use, as LiquidJS is loaded then (`liquidjs.ts`). */
let filenameEngine: Liquid | undefined;

/** Needs LiquidJS loaded (`liquidJs.load()`). */
function newEngine(root: string | null, escape: boolean): Liquid {
  const { Liquid } = liquidJs.get();
  const liquid = new Liquid({
    ...(root ? { root: [root], partials: [root], layouts: [root] } : {}),
    extname: '.html',
    ...(escape ? { outputEscape: 'escape' as const } : {}),
    strictFilters: true,
    ownPropertyOnly: true,
    renderLimit: RENDER_LIMIT_MS,
    cache: false,
  });
  registerReportFilters(liquid);
  return liquid;
}

/** The engine of a module directory (its partials resolve there). */
function engineOf(moduleDir: string): Liquid {
  let liquid = engines.get(moduleDir);
  if (!liquid) engines.set(moduleDir, (liquid = newEngine(moduleDir, true)));
  return liquid;
}

/** The template file `relativePath` of `moduleDir`, parsed (a path leaving the directory is refused). */
export async function loadTemplate(moduleDir: string, relativePath: string, reportName: string): Promise<ParsedTemplate> {
  const root = resolve(moduleDir);
  const file = resolve(root, relativePath);
  if (!file.startsWith(root + sep)) throw new UserError(`Report '${reportName}': template '${relativePath}' is outside its module directory`);
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new UserError(`Report '${reportName}': template '${relativePath}' does not exist in its module directory`);
  }
  const cached = parsed.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.template;
  await liquidJs.load();
  const liquid = engineOf(root);
  let templates: Template[];
  try {
    templates = liquid.parse(await readFile(file, 'utf8'), file);
  } catch (err) {
    throw new UserError(`Report '${reportName}': template '${relativePath}' cannot be parsed: ${(err as Error).message.split('\n')[0]}`);
  }
  const template: ParsedTemplate = { liquid, templates, variables: templateVariables(liquid, templates, DATA_ROOTS) };
  parsed.set(file, { mtimeMs: info.mtimeMs, size: info.size, template });
  return template;
}

/**
 * A report's filename template, parsed (without HTML escaping), and the paths it reads. Async
 * since LiquidJS is loaded on first use.
 */
export async function parseFilename(source: string, reportName: string): Promise<ParsedTemplate> {
  await liquidJs.load();
  filenameEngine ??= newEngine(null, false);
  try {
    const templates = filenameEngine.parse(source);
    return { liquid: filenameEngine, templates, variables: templateVariables(filenameEngine, templates, DATA_ROOTS) };
  } catch (err) {
    throw new UserError(`Report '${reportName}': filename '${source.slice(0, 80)}' cannot be parsed: ${(err as Error).message.split('\n')[0]}`);
  }
}
