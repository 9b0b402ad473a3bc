/**
 * The data a report's templates read, for the whole batch of records at once: the variable paths
 * the templates mention (`template-variables.ts`) become field paths of the printed model, read by
 * one `QuerySet.read` — relations of plain stored fields come in the same SELECT as JSON, anything
 * else with one query per relation for all records — so 100 orders with their lines, customer and
 * currency cost the same statements as one. Reads are the caller's: record rules, companies and
 * rights apply as on `/api/query` (a linked record the caller may not read is null).
 *
 * The template's globals:
 * - `record`: the record, with every field path the templates use;
 * - `company`: the record's own `company` when the model has one and it is set, else the caller's
 *   current company (an order is printed under the company that sold it);
 * - `user`: the calling user.
 *
 * A path that reaches a `Currency` also reads what `| monetary` needs (name, symbol, position,
 * rounding). Segments that are not fields end a path: Liquid's `first`, `last` and indexes on a
 * list stay on its model, `size` and anything unknown read nothing more (Liquid renders them empty).
 */
import { RelationalField, ManyToOneField } from '../orm/fields/relational-fields.js';
import { currentEnv } from '../orm/env.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { QuerySet } from '../orm/queryset.js';
import type { Serialized } from '../orm/read/read-records.js';
import type { Segments } from './template-variables.js';

/** What a `Currency` link carries for the `monetary` filter. */
const CURRENCY_FIELDS = ['name', 'symbol', 'position', 'rounding'];
/** The ORM reads paths at most this deep (`read/field-tree.ts`). */
const MAX_PATH_DEPTH = 6;
/** Liquid's own properties of a list (`lines.first.name`): they stay on the list's model. */
const LIST_ITEM = new Set(['first', 'last']);

export interface ReportScope {
  readonly record: Serialized;
  readonly company: Serialized | null;
  readonly user: Serialized | null;
}

/** The scope of each record of `ids` (in that order) for templates reading `variables`. */
export async function readReportData(meta: ModelMeta, ids: readonly number[], variables: readonly Segments[]): Promise<ReportScope[]> {
  const { registry, uid, companyId } = currentEnv();
  const byRoot = (root: string) => variables.filter((v) => v[0] === root).map((v) => v.slice(1));
  const companyField = meta.fields.get('company');
  const ownCompany = companyField instanceof ManyToOneField && companyField.target.name === 'Company';
  const companyVariables = byRoot('company');

  const recordVariables = [...byRoot('record'), ...(ownCompany && companyVariables.length ? companyVariables.map((v) => ['company', ...v]) : [])];
  const records = await readPaths(meta, ids, fieldPaths(meta, recordVariables));
  const byId = new Map(records.map((r) => [r.id as number, r]));

  let callerCompany: Serialized | null = null;
  const needsCallerCompany = companyVariables.length && (!ownCompany || records.some((r) => !r.company));
  if (needsCallerCompany && companyId !== null && registry.has('Company')) {
    const company = registry.meta('Company');
    [callerCompany = null] = await readPaths(company, [companyId], fieldPaths(company, companyVariables));
  }
  let user: Serialized | null = null;
  const userVariables = byRoot('user');
  if (userVariables.length && uid !== null && registry.has('User')) {
    const users = registry.meta('User');
    [user = null] = await readPaths(users, [uid], fieldPaths(users, userVariables));
  }
  return ids.map((id) => {
    const record = byId.get(id)!;
    const own = ownCompany ? (record.company as Serialized | null) : null;
    return { record, company: own ?? callerCompany, user };
  });
}

/** The records `ids` of `meta` (archived ones too: they were named) along `paths`, as the caller reads them. */
async function readPaths(meta: ModelMeta, ids: readonly number[], paths: readonly string[]): Promise<Serialized[]> {
  if (!ids.length) return [];
  return new QuerySet(meta).public_only().with_archived().filter(inCondition(['id'], [...ids])).read(['display_name', ...paths]);
}

/** Field paths (`order_lines.product.name`) of `meta` for the variable paths below a global. */
export function fieldPaths(meta: ModelMeta, variables: readonly Segments[]): string[] {
  const paths = new Set<string>();
  for (const segments of variables) {
    let model = meta;
    let list = false;
    const path: string[] = [];
    for (const segment of segments) {
      const field = model.fields.get(segment);
      if (!field || field.options.internal) {
        // `lines.first.name`, `lines[0].name`: an item of the list, on the same model.
        if (list && (LIST_ITEM.has(segment) || /^\d+$/.test(segment))) {
          list = false;
          continue;
        }
        break;
      }
      path.push(segment);
      if (path.length > MAX_PATH_DEPTH) {
        // A template bug, not the caller's: a 500 whose log names the path.
        throw new Error(`A report template reads '${segments.join('.')}', deeper than the ${MAX_PATH_DEPTH} levels a read may go`);
      }
      if (!(field instanceof RelationalField)) break;
      if (field.target.name === 'Currency' && path.length < MAX_PATH_DEPTH) {
        for (const f of CURRENCY_FIELDS) paths.add([...path, f].join('.'));
      }
      model = field.target;
      list = !(field instanceof ManyToOneField);
    }
    if (path.length) paths.add(path.join('.'));
  }
  return [...paths];
}
