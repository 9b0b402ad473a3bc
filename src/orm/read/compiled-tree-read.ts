/**
 * A query's page of records — the API's `/api/query`, a list view — with its statement compiled
 * once per shape and then only given the filter's literals: `Q(state='sale')` and
 * `Q(state='sent')` share a statement (literal-slots.ts), so a repeat read neither compiles its
 * filter, plans, nor assembles SQL, and finds its prepared statement by a text already hashed. The
 * statement is exactly the one `readTree` / `readTreeCounted` would build (same text, same values),
 * so what it returns is too.
 *
 * The key: per access policy and model (`CompiledCache`), then the user, company and companies the
 * rules name, the filter's shape, the order, the page, the field tree and whether it is counted. A
 * statement whose build read the clock (`today`, `now`, in the filter or a rule) is never reused,
 * nor is one built elevated; a name search (its terms are patterns) and a locking read are not
 * compiled.
 */
import { activePolicy, type AccessPolicy } from '../access-policy.js';
import type { ModelMeta } from '../model-meta.js';
import { CompiledSelect } from '../compiled-select.js';
import { currentEnv } from '../env.js';
import { convertLiteral, filterShape, LiteralSlots, type FilterShape } from '../query/literal-slots.js';
import { currentVariables, rootScope, type QueryState } from '../query/select-plan.js';
import type { Row } from '../query/select-rows.js';
import { CompiledCache } from './compiled-cache.js';
import type { FieldTree } from './field-tree.js';
import { countedRows, serializeRows, treeStatement, type Serialized } from './read-records.js';
import type { Field } from '../fields/field.js';

/** Shapes remembered per access policy and model, and statements made before the cache starts again. */
const MAX_SHAPES = 64;
export const MAX_COMPILED_TREE_READS = 2048;

interface CompiledTreeRead {
  select: CompiledSelect;
  /** The field converting each slot's literal. */
  fields: readonly Field[];
}

const compiledTreeReads = new CompiledCache<CompiledTreeRead>(MAX_SHAPES, MAX_COMPILED_TREE_READS);

/** `readTree(tree, state)` through a compiled statement; undefined when the read is not compiled. */
export async function readTreeCompiled(tree: FieldTree, state: QueryState): Promise<Serialized[] | undefined> {
  const run = prepared(tree, state, false);
  return run ? serializeRows(tree, await run(), state.publicOnly) : undefined;
}

/** `readTreeCounted(tree, state)` through a compiled statement; undefined when the read is not compiled. */
export async function readTreeCountedCompiled(tree: FieldTree, state: QueryState): Promise<{ records: Serialized[]; count: number | null } | undefined> {
  const run = prepared(tree, state, true);
  return run ? countedRows(tree, state, await run()) : undefined;
}

/** The run of the read's compiled statement with this state's literals; null when not compiled. */
function prepared(tree: FieldTree, state: QueryState, counted: boolean): (() => Promise<Row[]>) | null {
  const access = activePolicy();
  if (!access || state.nameSearch.length || state.forUpdate) return null;
  const env = currentEnv();
  const shape = filterShape(state.filters);
  const key = `${env.uid}\0${env.companyId}\0${env.companyIds.join(',')}\0${shape.key}\0${state.order?.join(',') ?? ''}\0`
    + `${state.limit}\0${state.offset}\0${state.activeTest ? 1 : 0}${state.publicOnly ? 1 : 0}${counted ? 1 : 0}\0${treeKey(tree)}`;
  let compiled = compiledTreeReads.get(access, tree.meta, key);
  if (compiled === undefined) {
    compiled = compile(tree, state, counted, shape.slots);
    compiledTreeReads.set(access, tree.meta, key, compiled);
  }
  if (!compiled) return null;
  const { select, fields } = compiled;
  const values = shape.slots.map((node, i) => convertLiteral(fields[i]!, node));
  return () => select.run<Row>(values);
}

function compile(tree: FieldTree, state: QueryState, counted: boolean, slots: FilterShape['slots']): CompiledTreeRead | null {
  let readClock = false;
  const literals = new LiteralSlots(slots);
  const variables = currentVariables(() => (readClock = true));
  const { columns, rest } = treeStatement(tree, state, counted, () => {
    const scope = rootScope(tree.meta, state.publicOnly, variables);
    scope.literals = literals;
    return scope;
  });
  const fields = literals.fields();
  if (readClock || !fields) return null;
  const select = CompiledSelect.fromMarked(columns, rest, slots.length);
  return select && { select, fields };
}

/** The field tree's paths, as a key. */
function treeKey(tree: FieldTree): string {
  let key = '';
  for (const [name, { children }] of tree.fields) key += children ? `${name}(${treeKey(children)}),` : `${name},`;
  return key;
}

/** How many compiled reads of `meta` are kept for `access` (reusable ones only): for tests and diagnostics. */
export function reusableTreeReads(access: AccessPolicy, meta: ModelMeta): number {
  return compiledTreeReads.reusable(access, meta);
}
