/**
 * The base class of every model. A module declares `class Task extends Model { static fields = … }`;
 * the registry of each database composes the final class (declaration plus the extensions of the
 * modules installed there) and defines the field accessors on it. Records are instances of that
 * final class:
 *
 * ```ts
 * const open = await Task.query().filter('Q(stage__is_closed=False)').order_by('deadline ASC').all();
 * const stage = await open[0].stage;          // relational fields are awaited (batch-loaded)
 * await open[0].write({ priority: 'high' });  // scalar fields are plain properties: open[0].priority
 * ```
 *
 * Static ORM entry points resolve the final class through the current environment, so
 * `Task.query()` inside model code uses the caller's database, even when `Task` is the imported
 * declaration rather than the composed class.
 */
import type { Field } from './fields/field.js';
import { ManyToManyField, OneToManyField } from './fields/relational-fields.js';
import type { ModelMeta } from './model-meta.js';
import { currentEnv } from './env.js';
import { QuerySet, type FilterInput } from './queryset.js';
import { RecordBatch } from './record-batch.js';
import { createRecords } from './write/create-records.js';
import { writeRecords } from './write/write-records.js';
import { deleteRecords } from './write/delete-records.js';
import { NotFound } from '../errors.js';

export type ModelClass = typeof Model;

/** One `_unique_when` entry (see `Model._unique_when`). */
export interface UniqueWhen {
  readonly fields: readonly string[];
  /** A stored Boolean field; only records where it is true take part. */
  readonly when: string;
  /** The `ValidationError` message of a violation (default: one naming the fields). */
  readonly message?: string;
}

/** One `_state_locks` entry (see `Model._state_locks`, `state-locks.ts`). */
export interface StateLock {
  /** A Q-expression on the record: the state in which the lock holds. */
  readonly when: string;
  /** Fields that cannot be written in that state; a OneToMany locks its lines (create, write, delete). */
  readonly fields?: readonly string[];
  /** API methods `/api/execute` refuses on records in that state. */
  readonly methods?: readonly string[];
  /** The stored field whose value names the state in a refusal (`stage`). */
  readonly state?: string;
}

/** One `_wizards` entry: the dialog asking for an API method's inputs (see `Model._wizards`). */
export interface WizardDeclaration {
  /** The dialog's title (and the name of the button opening it). */
  readonly title: string;
  /**
   * The inputs, as field constructors (`fields.ManyToOne('Contact', {required: true})`): every type
   * but OneToMany and File, without `calculate`, `setter` or `store` (a wizard has no record).
   */
  readonly fields: Readonly<Record<string, Field>>;
  /** Layout, as `UiView.arch` nodes naming these fields; default one row per field. */
  readonly arch?: readonly unknown[];
  /**
   * A static method `(context) => values` giving defaults from the call's context
   * (`context.active_ids`: the selected records), over the fields' declared defaults.
   */
  readonly defaults?: string;
}

/** `Model._owned_by`: the fields naming a record's owner (see there). */
export interface OwnedBy {
  /** A stored Char field holding the owner's model name. */
  readonly model: string;
  /** A stored Integer field holding the owner's id. */
  readonly record: string;
}

/**
 * A change about to be made to records of a model, as `Model._check_change` sees it: a create
 * (the values of each new record, as given), a write (the records and the values given, the same
 * for all), or a delete.
 */
export type ModelChange =
  | { readonly op: 'create'; readonly vals: readonly Record<string, unknown>[] }
  | { readonly op: 'write'; readonly ids: readonly number[]; readonly vals: Readonly<Record<string, unknown>> }
  | { readonly op: 'delete'; readonly ids: readonly number[] };

/** A change once written (`Model._after_change`): the records' ids and the values as given. */
export type ModelChangeDone =
  | { readonly op: 'create'; readonly ids: readonly number[]; readonly vals: readonly Record<string, unknown>[] }
  | { readonly op: 'write'; readonly ids: readonly number[]; readonly vals: Readonly<Record<string, unknown>> };

export class Model {
  /** Model name (defaults to the class name); used in URLs: `/api/query/<name>`. */
  static _name?: string;
  /** Table name (defaults to the snake_case model name). */
  static _table?: string;
  static _verbose_name?: string;
  /** Default ordering: `['deadline ASC', 'name ASC']`. */
  static _order_by?: string[];
  /** Field-name tuples whose combination is unique. */
  static _unique_together?: string[][];
  /**
   * Partial uniqueness: the `fields` combination is unique among the records whose stored Boolean
   * `when` field is true — `[{ fields: ['category'], when: 'is_base_uom' }]` allows one base unit
   * per category. A unique index `WHERE <when>` in the database, so concurrent writes cannot both
   * pass; a violation is a `ValidationError` with `message` (or one naming the fields).
   */
  static _unique_when?: UniqueWhen[];
  /** Field giving `display_name` (defaults to `name` when the model has one). */
  static _rec_name?: string;
  /** Methods `/api/execute/<model>/<method>` may call; nothing else is callable remotely. */
  static _api_methods?: string[];
  /**
   * Dialogs asking for a method's inputs before it runs, by API method (CONTRACTS C1 "Wizards"):
   * `{action_reassign: {title, fields: {assignee: fields.ManyToOne('Contact', {required: true})},
   * arch?, defaults?}}`. `POST /api/action-meta/<model>/<method>` describes the dialog; executing
   * the method validates `inputs` against these fields first (400 naming the field) and passes it
   * the converted values. Each key must be listed in `_api_methods`.
   */
  static _wizards?: Record<string, WizardDeclaration>;
  /**
   * Form effects by field (CONTRACTS C1 "Form effects"): `{customer: 'effect_customer'}` runs
   * `effect_customer()` on the draft record of a form when `customer` changes there
   * (`POST /api/ui-effect/<model>`); the method assigns fields (`this.company = …`), which write
   * nothing on a draft, and the fields computed from what it set follow.
   */
  static _ui_effects?: Record<string, string>;
  /**
   * States that lock what they promise: `[{when: 'Q(stage__is_confirmed=True)', fields:
   * ['customer', 'order_lines'], methods: ['action_confirm'], state: 'stage'}]`. While a record
   * matches `when`, writing its `fields` (and creating, writing or deleting the lines of a
   * OneToMany among them) is a `UserError`, and so is calling its `methods` through
   * `/api/execute`; the web client shows those fields read-only and hides those buttons.
   */
  static _state_locks?: StateLock[];
  /** Fields `name_search` matches (defaults to the `_rec_name`). */
  static _name_search_fields?: string[];
  /**
   * Records that belong to another record named by two fields, as Odoo's attachments and messages
   * (`res_model` / `res_id`): `{model: 'model', record: 'record'}`. A record with an owner is
   * readable only by whoever can read the owner (its right, rules and company); one without owner
   * follows the model's own rights and rules alone.
   */
  static _owned_by?: OwnedBy;
  static fields: Record<string, Field> = {};
  /**
   * A veto over changes, for rules no declaration expresses (`en` cannot be modified). When a
   * model defines it, every create, write and delete of its records — record and queryset
   * methods, the API, data files — calls it on the composed class, in the caller's environment,
   * after the caller's rights are checked and before anything is written; throwing (a
   * `UserError`, a `ValidationError`) refuses the whole change, and the unit of work rolls back.
   * It sees the values as given (before defaults and conversion). The UPDATEs that recompute
   * stored computed fields are not changes made by anyone and do not call it.
   */
  static _check_change?(change: ModelChange): void | Promise<void>;
  /**
   * What follows a change, in the same unit of work, once its rows are written and recomputed:
   * every create and write of the model's records from any path (record and queryset methods,
   * the API, bulk, import, data files) calls it with the records' ids — a create with the values
   * each record was given, a write once per distinct set of values. The messaging module makes
   * assignees followers this way. Overrides call `super._after_change?.(change)`. What it writes
   * to the changed records themselves is not in the records a create returns (write elsewhere).
   */
  static _after_change?(change: ModelChangeDone): void | Promise<void>;
  /**
   * A conversation on each record (the messaging module's chatter, CONTRACTS C5): `message_post`,
   * `message_follow` / `message_unfollow`, and readable `messages` and `followers`.
   */
  static _mail_thread?: boolean;
  /** With `_mail_thread`: ManyToOne fields to `Contact` or `User` whose person follows the record once set. */
  static _follow_fields?: string[];
  /** Set on the composed class of each database by the registry. */
  static _meta?: ModelMeta;

  declare readonly id: number;
  declare readonly display_name: string;
  /** Column values as loaded, by field name (a ManyToOne holds the id). */
  _values: Record<string, unknown>;
  /** The records loaded together with this one; relational reads load for all of them at once. */
  _batch: RecordBatch;

  constructor(values: Record<string, unknown>, batch: RecordBatch) {
    this._values = values;
    this._batch = batch;
  }

  /** The model name of a declaration or composed class. */
  static modelName(): string {
    return Object.hasOwn(this, '_name') && this._name ? this._name : this.name;
  }

  /** The metadata of this model in the current database. */
  static meta(): ModelMeta {
    if (Object.hasOwn(this, '_meta') && this._meta) return this._meta;
    return currentEnv().registry.meta(this.modelName());
  }

  /** A query over this model: filter, order, page, count, aggregate, update, delete. */
  static query<T extends Model>(this: abstract new (...a: any[]) => T, filter?: FilterInput): QuerySet<T> {
    const qs = new QuerySet<T>((this as unknown as ModelClass).meta());
    return filter === undefined ? qs : qs.filter(filter);
  }

  /**
   * A draft record: `vals` assigned in memory (checked as any assignment), nothing written, `id`
   * null — what a form being edited holds before it is saved. Computed fields read from it, and
   * fields assigned on it only change it.
   */
  static new<T extends Model>(this: abstract new (...a: any[]) => T, vals: Record<string, unknown> = {}): T {
    const meta = (this as unknown as ModelClass).meta();
    const record = RecordBatch.newDrafts(meta, 1)[0] as T;
    for (const [name, value] of Object.entries(vals)) {
      if (!meta.fields.has(name)) throw new TypeError(`${meta.name} has no field '${name.slice(0, 60)}'`);
      (record as unknown as Record<string, unknown>)[name] = value;
    }
    return record;
  }

  /** Loads records by id, in the order given; unknown ids are left out. */
  static async browse<T extends Model>(this: abstract new (...a: any[]) => T, ids: readonly number[]): Promise<T[]> {
    const meta = (this as unknown as ModelClass).meta();
    return RecordBatch.load(meta, ids) as Promise<T[]>;
  }

  /** Loads one record by id; `NotFound` when it does not exist. */
  static async get<T extends Model>(this: abstract new (...a: any[]) => T, id: number): Promise<T> {
    const meta = (this as unknown as ModelClass).meta();
    const [record] = await RecordBatch.load(meta, [id]);
    if (!record) throw new NotFound(`${meta.name} ${id} does not exist`);
    return record as T;
  }

  /** Creates one record from field values (unknown and non-settable keys are ignored). */
  static async create<T extends Model>(this: abstract new (...a: any[]) => T, vals: Record<string, unknown>): Promise<T> {
    const meta = (this as unknown as ModelClass).meta();
    const [record] = await createRecords(meta, [vals]);
    return record as T;
  }

  /** Creates several records in one statement per table touched. */
  static async create_many<T extends Model>(
    this: abstract new (...a: any[]) => T,
    valsList: readonly Record<string, unknown>[],
  ): Promise<T[]> {
    const meta = (this as unknown as ModelClass).meta();
    return createRecords(meta, valsList) as Promise<T[]>;
  }

  /** Writes values to this record (unknown and non-settable keys are ignored). */
  async write(vals: Record<string, unknown>): Promise<void> {
    await writeRecords(this.modelMeta(), [this.id], vals);
    await this.reload();
  }

  /** Deletes this record. */
  async unlink(): Promise<void> {
    await deleteRecords(this.modelMeta(), [this.id]);
  }

  /**
   * How many records the to-many field `name` holds — what `(await this.<name>).length` gives,
   * without loading them — counted for every record of the batch in one query. Meant for
   * computed counts (`task_count`) read over whole lists.
   */
  async count_related(name: string): Promise<number> {
    const field = this.modelMeta().fields.get(name);
    if (!(field instanceof OneToManyField || field instanceof ManyToManyField)) {
      // A mistake in model code, not in a request: a plain error (a 500 that names nothing).
      throw new TypeError(`count_related: '${name}' is not a OneToMany or ManyToMany field of ${this.modelMeta().name}`);
    }
    return this._batch.relatedCount(field, this);
  }

  /**
   * `compute()` run once per `key` for all the records loaded together with this one, its promise
   * shared: a compute method looking something up (a currency rate by currency and date) costs one
   * query per distinct key, not one per record. Lives as long as the batch, so only for values
   * that cannot change while the records are being computed.
   */
  for_batch<T>(key: string, compute: () => Promise<T>): Promise<T> {
    return this._batch.shared(key, compute);
  }

  /** Re-reads this record's columns (after a write). */
  async reload(): Promise<void> {
    const [fresh] = await RecordBatch.load(this.modelMeta(), [this.id]);
    if (!fresh) throw new NotFound(`${this.modelMeta().name} ${this.id} does not exist`);
    this._values = fresh._values;
    this._batch = fresh._batch;
  }

  modelMeta(): ModelMeta {
    return (this.constructor as ModelClass).meta();
  }

  toJSON(): Record<string, unknown> {
    return { id: this.id, display_name: this.display_name };
  }
}

/**
 * Assigning a name that is no field of the record (`task.prority = '2'`) must not pass silently as
 * a plain property nobody writes: the assignment reaches this trap at the end of the prototype
 * chain (fields are accessors on the composed class, found before it) and throws a `TypeError`
 * naming the model and the name. Properties of model code's own start with `_` and are kept.
 */
Object.setPrototypeOf(Model.prototype, new Proxy(Object.prototype, {
  set(_target, name, value, receiver: object) {
    if (typeof name === 'symbol' || name.startsWith('_')) {
      return Reflect.defineProperty(receiver, name, { value, writable: true, enumerable: true, configurable: true });
    }
    const model = (receiver.constructor as Partial<ModelClass>)?.modelName?.() ?? 'The record';
    throw new TypeError(`${model} has no field '${name.slice(0, 60)}' to assign (a property of your own must start with '_')`);
  },
}));
