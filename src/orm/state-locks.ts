/**
 * States that lock what they promise (`Model._state_locks`): while a record matches a lock's
 * `when` filter (a confirmed sales order: `Q(stage__is_confirmed=True)`), its `fields` cannot be
 * written, and its `methods` cannot be called through `/api/execute`. A OneToMany among the fields
 * locks its lines too: a line of a locked record cannot be created, written, moved or deleted
 * (through the line model itself; through the parent, the parent's own write is refused).
 *
 * Enforced in the write path beside `_check_change` (every create, write and delete from any
 * path: the API, model code, data files), on the state *before* the change: a write that moves a
 * record out of the state and edits a locked field at once is refused, one moving it in is not.
 * The state is read as the platform (the lock is a business rule, not a visibility rule), and
 * only when a change touches a locked field: other writes cost no statement. The web client reads
 * the declarations from `model-info` and shows locked fields read-only and hides refused methods.
 *
 * The check locks what it reads: the statement that reads the state takes the rows `FOR NO KEY
 * UPDATE` (the lock the write after it takes anyway), in ascending id order, owners first — the
 * order every write keeps (`write/row-locks.ts`) — so a concurrent change of the state (a Confirm
 * not yet committed) is waited for, and the state judged is the one it committed. Without it two
 * transactions could both pass: a line edited while its order was being confirmed, one order
 * confirmed twice. A write locks all the records it writes there (not only those given a locked
 * field), so its rows are still taken in one order; a line's check locks its parents, which are its
 * owners; a method's check locks the records it will run on.
 */
import { sql } from '../db/sql-fragment.js';
import { ModuleError, UserError } from '../errors.js';
import { withEnv } from './env.js';
import { runGuarded } from './execute-sql.js';
import type { Field } from './fields/field.js';
import type { OneToManyField } from './fields/relational-fields.js';
import type { ModelChange, StateLock } from './model.js';
import type { ModelMeta } from './model-meta.js';
import type { Registry } from './registry.js';
import { compileFilter } from './query/compile-filter.js';
import type { FilterNode } from './query/filter-ast.js';
import { parseFilter } from './query/filter-parser.js';
import { QueryScope } from './query/query-scope.js';
import { currentVariables } from './query/select-plan.js';
import { lockedWholeRows, updateStrength, type LockStrength, type OwnerLock } from './write/row-locks.js';

/** One lock of a model, its fields bound. */
export interface BoundStateLock {
  readonly meta: ModelMeta;
  readonly when: string;
  /** `when`, parsed once. */
  readonly filter: FilterNode;
  readonly fields: readonly Field[];
  readonly methods: readonly string[];
  /** The field naming the state in refusals (`stage` → `Stage "Sales Order"`), or null. */
  readonly state: Field | null;
}

/** A parent's lock on one of its OneToMany fields, as its line model sees it. */
interface LineLock {
  readonly lock: BoundStateLock;
  /** The lines' link to the parent (the OneToMany's inverse). */
  readonly inverse: Field;
  readonly lines: Field;
}

const ownLocks = new WeakMap<ModelMeta, BoundStateLock[]>();
const lineLocks = new WeakMap<ModelMeta, LineLock[]>();

/** Whether a change of `meta`'s records may meet a lock at all (most models: no, and no work). */
export function hasStateLocks(meta: ModelMeta): boolean {
  return ownLocks.has(meta) || lineLocks.has(meta);
}

/** The model's bound locks (none for most models). */
export function stateLocksOf(meta: ModelMeta): readonly BoundStateLock[] {
  return ownLocks.get(meta) ?? [];
}

/**
 * Checks and binds `meta`'s `_state_locks` (a mistaken declaration fails the install), and files
 * each locked OneToMany with its line model. Called by the registry once every model is composed.
 */
export function bindStateLocks(registry: Registry, meta: ModelMeta): void {
  const declared = (meta.cls as { _state_locks?: unknown })._state_locks;
  if (declared === undefined) return;
  const where = `${meta.name}._state_locks`;
  if (!Array.isArray(declared)) throw new ModuleError(`${where} must be a list of {when, fields?, methods?, state?}`);
  const bound: BoundStateLock[] = [];
  for (const entry of declared as StateLock[]) {
    if (typeof entry?.when !== 'string' || !entry.when.trim()) throw new ModuleError(`${where}: each entry needs 'when', a Q-expression`);
    let filter: FilterNode;
    try {
      filter = parseFilter(entry.when);
    } catch (err) {
      throw new ModuleError(`${where}: 'when' is not a valid filter (${(err as Error).message})`);
    }
    const fields = (entry.fields ?? []).map((name) => {
      const field = meta.fields.get(name);
      if (!field || field.options.internal || (!field.column && field.type !== 'OneToMany' && field.type !== 'ManyToMany')) {
        throw new ModuleError(`${where} locks '${String(name)}', which is not a stored field of ${meta.name}`);
      }
      return field;
    });
    const methods = [...(entry.methods ?? [])];
    for (const method of methods) {
      if (!meta.apiMethods.has(method)) throw new ModuleError(`${where} refuses '${String(method)}', which is not in ${meta.name}._api_methods`);
    }
    if (!fields.length && !methods.length) throw new ModuleError(`${where}: an entry locks no field and refuses no method`);
    const state = entry.state === undefined ? null : meta.fields.get(entry.state) ?? null;
    if (entry.state !== undefined && !state?.column) throw new ModuleError(`${where}: 'state' must name a stored field, not '${String(entry.state)}'`);
    const lock: BoundStateLock = { meta, when: entry.when, filter, fields, methods, state };
    bound.push(lock);
    for (const lines of fields.filter((f): f is OneToManyField => f.type === 'OneToMany')) {
      const inverse = lines.inverse;
      const lineMeta = registry.meta(lines.targetName);
      lineLocks.set(lineMeta, [...(lineLocks.get(lineMeta) ?? []), { lock, inverse, lines }]);
    }
  }
  ownLocks.set(meta, bound);
}

/**
 * Refuses a create or delete a lock forbids (`UserError`): a line of a locked record. `throughParent`:
 * lines written by their parent's own write, which that write's check already covered.
 */
export async function assertUnlocked(meta: ModelMeta, change: ModelChange, throughParent = false): Promise<void> {
  if (throughParent) return;
  for (const line of lineLocks.get(meta) ?? []) {
    const parents = await parentsOf(meta, line.inverse, change);
    if (parents.length) await refuseLocked(line.lock, parents, `its ${line.lines.label.toLowerCase()} cannot be changed`);
  }
}

/**
 * Refuses a write a lock forbids (`UserError`): each record with the values it is given. `owners`:
 * the owners the write locks before its records (`ownerLock`), locked first here too.
 */
export async function assertUnlockedWrites(
  meta: ModelMeta, ids: readonly number[], given: readonly Record<string, unknown>[], throughParent = false, owners?: OwnerLock | null,
): Promise<void> {
  for (const lock of stateLocksOf(meta)) {
    const touched = new Set<Field>();
    const at = ids.filter((_, i) => {
      const hit = lock.fields.filter((f) => Object.hasOwn(given[i]!, f.name));
      hit.forEach((f) => touched.add(f));
      return hit.length > 0;
    });
    if (!at.length) continue;
    // Every record written is locked here, as strongly as its UPDATE will lock it: one order for all of them.
    const written = new Set([...new Set(given)].flatMap((vals) => Object.keys(vals)).flatMap((name) => meta.fields.get(name) ?? []));
    const locking: Locking = { ids, strength: updateStrength(meta, written), owners: owners ?? undefined };
    await refuseLocked(lock, at, `${listOf([...touched].map((f) => f.label))} cannot be changed`, locking);
  }
  const moved = [...new Set(given)].filter((vals) => lineLocks.get(meta)?.some((l) => Object.hasOwn(vals, l.inverse.name)));
  await assertUnlocked(meta, { op: 'write', ids, vals: Object.assign({}, ...moved) }, throughParent);
}

/**
 * Locks the records `method` is about to run on when a lock may refuse it, and answers the refusal
 * (`UserError`) when a lock holds one of them, else null. The caller throws it once it has found the
 * records visible (a hidden record is a 404, never named by a refusal); records it loads after this
 * are read as the lock leaves them.
 */
export async function methodRefusal(meta: ModelMeta, method: string, ids: readonly number[]): Promise<UserError | null> {
  for (const lock of stateLocksOf(meta)) {
    if (!lock.methods.includes(method)) continue;
    const refusal = await lockRefusal(lock, ids, `${methodLabel(method)} cannot run there`);
    if (refusal) return refusal;
  }
  return null;
}

/** The parents a change of lines touches: the lines' current parents and any new one it gives. */
async function parentsOf(meta: ModelMeta, inverse: Field, change: ModelChange): Promise<number[]> {
  const ids = new Set<number>();
  // A write's `vals` here merges the new parents any of its records are given.
  const given = change.op === 'create' ? change.vals : change.op === 'write' ? [change.vals] : [];
  for (const vals of given) {
    const value = vals[inverse.name];
    if (typeof value === 'number') ids.add(value);
  }
  if (change.op !== 'create' && change.ids.length) {
    const rows = await withEnv({ su: true }, () => meta.cls.query({ id__in: [...change.ids] }).with_archived().read([inverse.name]));
    for (const row of rows) {
      const parent = (row[inverse.name] as { id?: unknown } | null)?.id;
      if (typeof parent === 'number') ids.add(parent);
    }
  }
  return [...ids];
}

/** Throws when any of `ids` is in the lock's state, naming the records and the state. */
async function refuseLocked(lock: BoundStateLock, ids: readonly number[], what: string, locking?: Locking): Promise<void> {
  const refusal = await lockRefusal(lock, ids, what, locking);
  if (refusal) throw refusal;
}

/** The rows a check locks: `ids` (all the check's and more), at `strength`, after `owners`. */
interface Locking {
  readonly ids: readonly number[];
  readonly strength: LockStrength;
  readonly owners?: OwnerLock;
}

/**
 * Locks the records (see the file comment) and answers the refusal naming those of `ids` in the
 * lock's state, or null when none is.
 */
async function lockRefusal(lock: BoundStateLock, ids: readonly number[], what: string, locking?: Locking): Promise<UserError | null> {
  if (!ids.length) return null;
  const { meta, state } = lock;
  const inState = await lockedInState(lock, locking ?? { ids, strength: 'NO KEY UPDATE' });
  const at = ids.filter((id) => inState.has(id)).sort((a, b) => a - b).slice(0, 5);
  if (!at.length) return null;
  const fields = ['display_name', ...(state ? [state.name] : [])];
  const locked = await withEnv({ su: true }, () => meta.cls.query({ id__in: at }).with_archived().order_by('id ASC').read(fields));
  const names = locked.map((r) => String(r.display_name)).join(', ');
  const value = state ? stateValue(locked[0]![state.name]) : null;
  const where = state && value !== null ? ` in ${state.label} "${value}"` : '';
  return new UserError(`${meta.verboseName} ${names} ${locked.length > 1 ? 'are' : 'is'} locked${where}: ${what}`);
}

/**
 * The records of `locking.ids` in the lock's state, judged on their rows locked in this statement
 * (`lockedWholeRows`: a row the lock waited for is read as its writer committed it; the rest of
 * `when` — a stage's flag — is read as the statement's snapshot sees it). Read as the platform.
 */
async function lockedInState(lock: BoundStateLock, locking: Locking): Promise<Set<number>> {
  const { meta } = lock;
  const result = await withEnv({ su: true }, () => {
    const scope = new QueryScope(meta, currentVariables(), false);
    // Compiled before `from()`: the joins `when` needs are added to the scope as it compiles.
    const condition = compileFilter(lock.filter, scope);
    const rows = lockedWholeRows(meta, locking.ids, locking.strength, locking.owners?.gate);
    return runGuarded<{ id: number; in_state: boolean }>((guard) => sql`${locking.owners?.with ?? sql``}SELECT ${sql.id(scope.alias, 'id')} AS id,
      COALESCE(${condition}, FALSE) AS in_state${guard ? sql`, ${guard}` : sql``} FROM ${scope.from(rows)}`);
  });
  return new Set(result.filter((r) => r.in_state).map((r) => r.id));
}

function stateValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'object') return String((value as { display_name?: unknown }).display_name ?? (value as { id?: unknown }).id);
  return String(value);
}

/** `action_confirm` → `Confirm` (as the web client names the button). */
function methodLabel(method: string): string {
  const words = method.replace(/^action_/, '').replace(/_/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : method;
}

function listOf(labels: readonly string[]): string {
  return labels.length < 2 ? labels.join('') : `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)}`;
}
