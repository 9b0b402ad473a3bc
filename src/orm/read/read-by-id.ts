/**
 * One record by id along a field tree — the API's fetch, the record a form opens — with its
 * statement compiled once per principal, model and field list and then only given the id: a
 * repeat read neither parses, plans nor assembles SQL, and finds its prepared statement by a text
 * it has already hashed. The statement is exactly the one `QuerySet.read` builds (same text, same
 * values but the id), so what it returns is too.
 *
 * What a compiled statement holds besides the id — the record rules and company isolation of the
 * access policy, the user and companies they name — is its key: per access policy and model
 * (`CompiledCache`), then per user, company, companies and field list. A statement whose build
 * read the clock (a rule on `today` or `now`) is never reused, nor is one built elevated.
 */
import { activePolicy, type AccessPolicy } from '../access-policy.js';
import { currentEnv } from '../env.js';
import type { ModelMeta } from '../model-meta.js';
import { CompiledSelect } from '../compiled-select.js';
import { CompiledCache } from './compiled-cache.js';
import { EMPTY_STATE, currentVariables, rootScope, type QueryState } from '../query/select-plan.js';
import { selectStatement, type Row } from '../query/select-rows.js';
import { QuerySet } from '../queryset.js';
import { buildFieldTree, defaultFieldPaths, type FieldTree } from './field-tree.js';
import { levelList, serializeRows, type Serialized } from './read-records.js';

/** The id a statement is compiled with: no record has it (ids are positive); found back among its values. */
const ID_PLACEHOLDER = -1_987_654_321;

/** Field lists remembered per access policy and model: bounded, whatever field lists callers send. */
const MAX_SHAPES = 64;
/** Compiled reads made before the whole cache is dropped and starts again (`CompiledCache`). */
export const MAX_COMPILED_READS = 2048;

interface CompiledRead {
  tree: FieldTree;
  select: CompiledSelect;
}

const compiledReads = new CompiledCache<CompiledRead>(MAX_SHAPES, MAX_COMPILED_READS);

/** The record, archived or not, as `read(paths)` of a queryset filtered on its id; undefined when the caller cannot see it. */
export async function readById(meta: ModelMeta, id: number, paths: readonly string[] | undefined, publicOnly: boolean): Promise<Serialized | undefined> {
  const access = activePolicy();
  const compiled = access ? compiledRead(access, meta, paths ?? [], publicOnly) : null;
  if (!compiled) {
    let qs = new QuerySet(meta).with_archived().filter({ id }).order_by('id ASC');
    if (publicOnly) qs = qs.public_only();
    return (await qs.read(paths))[0];
  }
  const rows = await compiled.select.run<Row>([id]);
  return (await serializeRows(compiled.tree, rows, publicOnly))[0];
}

function compiledRead(access: AccessPolicy, meta: ModelMeta, paths: readonly string[], publicOnly: boolean): CompiledRead | null {
  const env = currentEnv();
  const key = `${env.uid}\0${env.companyId}\0${env.companyIds.join(',')}\0${publicOnly ? 1 : 0}\0${paths.join('\0')}`;
  const held = compiledReads.get(access, meta, key);
  if (held !== undefined) return held;
  const compiled = compile(meta, paths, publicOnly);
  compiledReads.set(access, meta, key, compiled);
  return compiled;
}

/** The statement `readById`'s queryset would send, with the id as its one variable part. */
function compile(meta: ModelMeta, paths: readonly string[], publicOnly: boolean): CompiledRead | null {
  const tree = buildFieldTree(meta, paths.length ? paths : defaultFieldPaths(meta), publicOnly);
  const state: QueryState = {
    ...EMPTY_STATE, publicOnly, activeTest: false, order: ['id ASC'],
    filters: [{ kind: 'condition', segments: ['id'], value: ID_PLACEHOLDER, position: 0 }],
  };
  let readClock = false;
  const scope = rootScope(meta, publicOnly, currentVariables(() => (readClock = true)));
  const { columns, rest } = selectStatement(meta, state, levelList(tree, publicOnly), scope);
  const slot = rest.values.indexOf(ID_PLACEHOLDER);
  const once = slot >= 0 && rest.values.indexOf(ID_PLACEHOLDER, slot + 1) < 0 && !columns.values.includes(ID_PLACEHOLDER);
  if (readClock || !once) return null;
  return { tree, select: CompiledSelect.withSlot(columns, rest, slot) };
}

/** How many compiled reads of `meta` are kept for `access` (reusable ones only): for tests and diagnostics. */
export function reusableReads(access: AccessPolicy, meta: ModelMeta): number {
  return compiledReads.reusable(access, meta);
}
