/**
 * Defines the field properties of a composed model class: scalar fields read synchronously from
 * the loaded values (`task.priority`), relational and non-stored computed fields return promises
 * (`await task.stage`, `await task.tags`), loaded for the whole batch at once.
 */
import { displayName } from './display-name.js';
import { RelationalField } from './fields/relational-fields.js';
import type { Model } from './model.js';
import type { ModelMeta } from './model-meta.js';

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
    Object.defineProperty(proto, field.name, { get, configurable: true, enumerable: false });
  }
}
