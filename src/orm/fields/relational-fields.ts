/**
 * Relational field types. A ManyToOne owns a `<name>_id` column with a foreign key; OneToMany is
 * the reverse of a ManyToOne on the target; ManyToMany goes through a join table (generated, or
 * the `through` model's table). The registry resolves targets and join tables when it binds them.
 */
import { Field, type FieldOptions, type RegistryEntry } from './field.js';
import type { ModelMeta } from '../model-meta.js';
import { INT32_MAX } from './scalar-fields.js';

/**
 * Whether `value` can be a record id: a positive integer that fits the `integer` id columns.
 * Beyond that PostgreSQL itself would refuse the statement, with an error naming no field.
 */
export function isRecordId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= INT32_MAX;
}

export type OnDelete = 'CASCADE' | 'SET NULL' | 'RESTRICT';

export abstract class RelationalField<O extends FieldOptions = FieldOptions> extends Field<O> {
  /** Set by the registry: the target model of this database. */
  target!: ModelMeta;
  constructor(
    readonly targetName: string,
    options: O,
  ) {
    super(options);
  }
  override get isRelational(): boolean {
    return true;
  }
  override describe(): RegistryEntry {
    return { ...super.describe(), related_model: this.targetName };
  }
  /** A record id, given as a number or as a record (`{id}`, a model instance). */
  toId(value: unknown): number {
    const id = value !== null && typeof value === 'object' && 'id' in value ? (value as { id: unknown }).id : value;
    if (isRecordId(id)) return id;
    throw this.invalid(value, `a ${this.targetName} id (an integer from 1 to ${INT32_MAX})`);
  }
}

export interface ManyToOneOptions extends FieldOptions {
  /** Name of the reverse OneToMany field created on the target model. */
  related_name?: string;
  on_delete?: OnDelete;
  /** Q-expression limiting the choices offered for this relation. */
  filter?: string;
}

export class ManyToOneField extends RelationalField<ManyToOneOptions> {
  readonly type = 'ManyToOne' as const;
  get onDelete(): OnDelete {
    return this.options.on_delete ?? 'SET NULL';
  }
  override get column(): string | null {
    return this.isStored ? `${this.name}_id` : null;
  }
  sqlType(): string {
    return 'integer';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined || value === false) return null;
    return this.toId(value);
  }
  override toFilterValue(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    // Any integer the column can hold may be compared (`parent__gt=0`); a larger one never matches
    // and would make PostgreSQL refuse the whole statement.
    if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= INT32_MAX) return value;
    throw this.invalid(value, `a ${this.targetName} id (an integer up to ${INT32_MAX})`);
  }
  override describe(): RegistryEntry {
    const entry = super.describe();
    entry.on_delete = this.onDelete;
    if (this.options.related_name) entry.related_name = this.options.related_name;
    if (this.options.filter) entry.filter = this.options.filter;
    return entry;
  }
}

export interface OneToManyOptions extends FieldOptions {
  filter?: string;
}

export class OneToManyField extends RelationalField<OneToManyOptions> {
  readonly type = 'OneToMany' as const;
  /** Set by the registry: the ManyToOne on the target pointing back here. */
  inverse!: ManyToOneField;
  constructor(
    targetName: string,
    /** Name of the ManyToOne field on the target that points back. */
    readonly inverseName: string,
    options: OneToManyOptions,
  ) {
    super(targetName, options);
  }
  override get isStored(): boolean {
    return false;
  }
  sqlType(): string {
    throw new Error('OneToMany has no column');
  }
  override describe(): RegistryEntry {
    return { ...super.describe(), related_name: this.inverseName };
  }
}

export interface ManyToManyOptions extends FieldOptions {
  /** Name of the reverse ManyToMany field created on the target model. */
  related_name?: string;
  /** Join model whose two ManyToOne fields link source and target. */
  through?: string;
  /** With `through`: the names of its ManyToOne fields to the source and to the target. */
  through_fields?: [string, string];
  filter?: string;
}

/** Where a ManyToMany's links live. */
export interface JoinTable {
  table: string;
  sourceColumn: string;
  targetColumn: string;
  /** The join model, when declared with `through`. */
  throughModel?: string;
}

export class ManyToManyField extends RelationalField<ManyToManyOptions> {
  readonly type = 'ManyToMany' as const;
  /** Set by the registry. */
  join!: JoinTable;
  override get isStored(): boolean {
    return false;
  }
  sqlType(): string {
    throw new Error('ManyToMany has no column');
  }
  override describe(): RegistryEntry {
    const entry = super.describe();
    if (this.options.related_name) entry.related_name = this.options.related_name;
    if (this.options.filter) entry.filter = this.options.filter;
    return entry;
  }
}

/** An attachment id: uploads become `Attachment` records (spec §2.4.6). */
export class FileField extends Field {
  readonly type = 'File' as const;
  override get column(): string | null {
    return this.isStored ? `${this.name}_id` : null;
  }
  sqlType(): string {
    return 'integer';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined || value === false) return null;
    if (isRecordId(value)) return value;
    throw this.invalid(value, `an attachment id (an integer from 1 to ${INT32_MAX}) or an upload {name, base64}`);
  }
  override describe(): RegistryEntry {
    return { ...super.describe(), related_model: 'Attachment' };
  }
}
