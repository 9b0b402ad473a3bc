/**
 * Defines the field properties of a composed model class: scalar fields read synchronously from
 * the loaded values (`task.priority`), relational and non-stored computed fields return promises
 * (`await task.stage`, `await task.tags`), loaded for the whole batch at once.
 *
 * Fields are assigned as plain properties, as in Odoo (`this.price = value / 100` in a setter):
 * the value is checked and converted at once (a `ValidationError` where it is assigned), the
 * record reads it back immediately, and on a saved record the write is queued and flushed through
 * the ordinary write path before the next statement (`pending-writes.ts`). On a draft
 * (`Model.new`) it only sets the draft's value. A computed field without a setter (nor
 * `editable`) and `id` cannot be assigned: a `TypeError` naming the field (a mistake in model code).
 */
import { displayName } from './display-name.js';
import { currentEnv } from './env.js';
import type { Field } from './fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField, RelationalField } from './fields/relational-fields.js';
import { Model } from './model.js';
import type { ModelMeta } from './model-meta.js';
import { isDraft } from './record-batch.js';
import { asLoaded } from './write/precompute.js';

export function defineRecordAccessors(meta: ModelMeta): void {
  const proto = meta.cls.prototype as object;
  for (const field of meta.fields.values()) {
    let get: (this: Model) => unknown;
    if (field.name === 'display_name') {
      get = function () {
        return displayName(meta, this._values);
      };
    } else if (field instanceof RelationalField) {
      get = function () {
        return this._batch.relation(field, this);
      };
    } else if (field.column) {
      get = function () {
        return field.fromColumn(this._values[field.name]);
      };
    } else if (field.options.calculate) {
      const method = field.options.calculate;
      get = function () {
        return Promise.resolve((this as any)[method]());
      };
    } else {
      continue;
    }
    const set = function (this: Model, value: unknown): void {
      assignField(meta, field, this, value);
    };
    Object.defineProperty(proto, field.name, { get, set, configurable: true, enumerable: false });
  }
}

/** Whether model code may assign the field (what a write may set, `readonly` and internal ones included). */
function isAssignable(field: Field): boolean {
  if (field.name === 'id') return false;
  if (field.isComputed) return field.options.setter !== undefined || field.isEditableComputed;
  return field.column !== null || field instanceof OneToManyField || field instanceof ManyToManyField;
}

function assignField(meta: ModelMeta, field: Field, record: Model, value: unknown): void {
  if (!isAssignable(field)) {
    const why = field.name === 'id' ? 'a record keeps its id' : `it is computed by ${field.options.calculate}() and has no setter`;
    throw new TypeError(`Cannot assign ${meta.name}.${field.name}: ${why}`);
  }
  const given = plainValue(value);
  // Checked where it is assigned: a wrong value fails here, not at a later flush.
  const column = field.column ? field.toColumn(given) : given;
  if (field.column) record._values[field.name] = asLoaded(field, column);
  if (field instanceof RelationalField) record._batch.assigned(field, record, value);
  if (isDraft(record)) {
    // A draft: nothing to write. Its setter applies the value to the draft's other fields now.
    if (field.options.setter) callDraftSetter(meta, field, record, given);
    return;
  }
  const env = currentEnv();
  env.work.pendingWrites.add(env, meta, record, field, given);
}

/**
 * A draft has no unit of work to await a setter in: a synchronous setter runs at once, an async one
 * (hashing, lookups) is refused with a clear error rather than left running unobserved.
 */
function callDraftSetter(meta: ModelMeta, field: Field, record: Model, value: unknown): void {
  const result: unknown = (record as unknown as Record<string, (v: unknown) => unknown>)[field.options.setter!]!(value);
  if (result instanceof Promise) {
    result.catch(() => undefined);
    throw new TypeError(`Cannot assign ${meta.name}.${field.name} on a draft: its setter ${field.options.setter}() is async; save the record first`);
  }
}

/** Records given as values stand for their ids (`order.customer = contact`, `task.tags = [a, b]`). */
function plainValue(value: unknown): unknown {
  if (value instanceof Model) return value.id;
  if (Array.isArray(value)) return value.map((v) => (v instanceof Model ? v.id : v));
  return value;
}
