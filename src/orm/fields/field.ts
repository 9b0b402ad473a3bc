/**
 * The base of every field type. A field object is declared once in a model class
 * (`fields.Char({...})`) and bound per database by the registry (`bind`), which gives it its
 * name and owning model; the bound copy is what the ORM, schema sync and API use.
 */
import { ValidationError } from '../../errors.js';
import type { ModelMeta } from '../model-meta.js';
import { unstorableText } from './storable-text.js';

export type FieldType =
  | 'Char' | 'Text' | 'Boolean' | 'Integer' | 'Float' | 'Monetary' | 'Date' | 'Datetime'
  | 'Selection' | 'ManyToOne' | 'OneToMany' | 'ManyToMany' | 'File' | 'Binary' | 'Json';

/**
 * A default is a value or a function of nothing, called once per created record in the creating
 * caller's environment; it may be async (a lookup such as the first stage), and then it is called
 * once per create call, its answer shared by the records created together.
 */
export type DefaultValue = unknown | (() => unknown);

/** Declaration parameters shared by every field type (spec §2.1.4 plus `depends`, `readonly`). */
export interface FieldOptions {
  /** Human label; derived from the field name when absent. */
  label?: string;
  description?: string;
  required?: boolean;
  default?: DefaultValue;
  index?: boolean;
  readonly?: boolean;
  /** Name of an instance method that returns the value (it may be async). */
  calculate?: string;
  /** Stores a computed value in a column (recomputed when `depends` change). */
  store?: boolean;
  /** Dotted paths a stored computed field recomputes on (`['lines.subtotal']`). */
  depends?: string[];
  /** Name of an instance method receiving a written value; keeps a computed field writable. */
  setter?: string;
  /**
   * A stored computed field the caller may also write (Odoo's `compute` + `readonly=False`): a
   * value given on create or update is kept as written; otherwise, and whenever a `depends`
   * path changes later, the field is computed (a line's unit price follows its product until
   * someone types one).
   */
  editable?: boolean;
  /** Q-expression gating the field's visibility on the settings (`Q(enable_multi_currency=True)`). */
  visible_setting?: string;
  /** Never readable, filterable or writable through the API (password and key hashes). */
  internal?: boolean;
  /**
   * Whether a clone copies the value (`/api/clone`): `false` gives the copy the field's default
   * instead; `true` copies an editable computed field, which is otherwise recomputed.
   */
  copy?: boolean;
}

export interface RegistryEntry {
  type: FieldType;
  label: string;
  required?: boolean;
  readonly?: boolean;
  max_length?: number;
  default?: unknown;
  related_model?: string;
  related_name?: string;
  choices?: [string, string][];
  precision?: number;
  description?: string;
  store?: boolean;
  computed?: boolean;
  on_delete?: string;
  currency_field?: string;
  /** A Text field holding sanitised HTML (`fields.Html`). */
  html?: boolean;
  visible_setting?: string;
  /**
   * Whether `visible_setting` holds for the caller's current company's `Settings` record right now
   * (`get_registry` adds it; false when the caller has no company or it has no settings). A
   * client hides the field while it is false.
   */
  visible_setting_holds?: boolean;
  filter?: string;
  index?: boolean;
}

export abstract class Field<O extends FieldOptions = FieldOptions> {
  abstract readonly type: FieldType;
  /** Set by `bind`. */
  name = '';
  /** Set by `bind`. */
  model!: ModelMeta;

  constructor(readonly options: O) {}

  /** A copy of this declaration bound to one model of one database. */
  bind(name: string, model: ModelMeta): this {
    const bound = Object.create(Object.getPrototypeOf(this)) as this;
    Object.assign(bound, this, { name, model });
    return bound;
  }

  get label(): string {
    return this.options.label ?? this.name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
  }
  get isComputed(): boolean {
    return this.options.calculate !== undefined;
  }
  /** Has a column in the model's table. */
  get isStored(): boolean {
    return !this.isComputed || this.options.store === true;
  }
  get isRequired(): boolean {
    return this.options.required === true;
  }
  /** A stored computed field whose written values are kept (`editable: true`). */
  get isEditableComputed(): boolean {
    return this.isComputed && this.options.store === true && this.options.editable === true;
  }
  /** Writable through create/update (spec §4.4 rule 1). */
  get isSettable(): boolean {
    if (this.options.internal || this.options.readonly) return false;
    if (this.isComputed) return this.options.setter !== undefined || this.isEditableComputed;
    return true;
  }
  get isRelational(): boolean {
    return false;
  }
  /** Column name in the model's table, or null for fields without a column. */
  get column(): string | null {
    return this.isStored ? this.name : null;
  }

  /** PostgreSQL column type. */
  abstract sqlType(): string;

  /** Converts and validates a written value into the column value; throws `ValidationError`. */
  toColumn(value: unknown): unknown {
    return value;
  }
  /** Converts a column value as the driver returns it into the wire value. */
  fromColumn(raw: unknown): unknown {
    return raw ?? null;
  }
  /** Converts a filter value for comparison with this field's column. */
  toFilterValue(value: unknown): unknown {
    return this.toColumn(value);
  }

  /** The value a new record gets when the create body does not name the field. */
  defaultValue(): unknown {
    const d = this.options.default;
    return typeof d === 'function' ? (d as () => unknown)() : d;
  }

  describe(): RegistryEntry {
    const o = this.options;
    const entry: RegistryEntry = { type: this.type, label: this.label };
    if (o.required) entry.required = true;
    if (o.readonly || (this.isComputed && !o.setter && !this.isEditableComputed)) entry.readonly = true;
    if (o.default !== undefined && typeof o.default !== 'function') entry.default = o.default;
    if (o.description) entry.description = o.description;
    if (o.index) entry.index = true;
    if (this.isComputed) {
      entry.computed = true;
      entry.store = o.store === true;
    }
    if (o.visible_setting) entry.visible_setting = o.visible_setting;
    return entry;
  }

  /**
   * A text value for a text column: a string, or a finite number or boolean written as one
   * (`"42"`, `"true"`); refused when PostgreSQL could not store it as given (NUL, half a
   * surrogate pair) or when it is anything else (an object, a list, Infinity).
   */
  protected textValue(value: unknown): string {
    if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value);
    if (typeof value !== 'string') throw this.invalid(value, 'a string');
    const problem = unstorableText(value);
    if (problem) throw this.invalid(value, `text without ${problem}`);
    return value;
  }

  protected invalid(value: unknown, expected: string): ValidationError {
    return new ValidationError(
      `Invalid value ${showValue(value)} for field '${this.name}' of ${this.model.name}: expected ${expected}`,
      { field: this.name, model: this.model.name, expected },
    );
  }
}

/** How much of a refused value an error message quotes. */
const MAX_SHOWN = 40;

/**
 * A refused value as an error message quotes it: at most 40 characters, never a second error.
 * JSON reads a number beyond a double (`1e400`) as Infinity, which `JSON.stringify` would show
 * as `null` — the very value the client did not send — so it is named for what it is. Model code
 * may pass what JSON cannot show (a BigInt, a cycle, a function): its type is named instead.
 */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return `'${value.slice(0, MAX_SHOWN)}'`;
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return Number.isNaN(value) ? 'NaN' : `${value < 0 ? '-' : ''}Infinity (a number beyond ±1.8e308)`;
  }
  try {
    return JSON.stringify(value)?.slice(0, MAX_SHOWN) ?? typeof value;
  } catch {
    return `(a ${typeof value === 'object' ? value?.constructor?.name ?? 'object' : typeof value})`;
  }
}
