/**
 * Field constructors for model declarations:
 *
 * ```ts
 * static fields = {
 *   name: fields.Char({ max_length: 50, required: true }),
 *   stage: fields.ManyToOne('ProjectStage', { related_name: 'tasks', on_delete: 'RESTRICT' }),
 * };
 * ```
 */
import type { FieldOptions } from './field.js';
import {
  BinaryField, BooleanField, CharField, DateField, DatetimeField, FloatField, IntegerField, JsonField,
  MonetaryField, SelectionField, TextField, HtmlField,
  type CharOptions, type FloatOptions, type MonetaryOptions, type SelectionOptions,
} from './scalar-fields.js';
import {
  FileField, ManyToManyField, ManyToOneField, OneToManyField,
  type ManyToManyOptions, type ManyToOneOptions, type OneToManyOptions,
} from './relational-fields.js';

export const fields = {
  Char: (o: CharOptions = {}) => new CharField(o),
  Text: (o: FieldOptions = {}) => new TextField(o),
  /** Rich text, sanitised on write. */
  Html: (o: FieldOptions = {}) => new HtmlField(o),
  Boolean: (o: FieldOptions = {}) => new BooleanField(o),
  Integer: (o: FieldOptions = {}) => new IntegerField(o),
  Float: (o: FloatOptions = {}) => new FloatField(o),
  Monetary: (o: MonetaryOptions = {}) => new MonetaryField(o),
  Date: (o: FieldOptions = {}) => new DateField(o),
  Datetime: (o: FieldOptions = {}) => new DatetimeField(o),
  Selection: (o: SelectionOptions) => new SelectionField(o),
  ManyToOne: (target: string, o: ManyToOneOptions = {}) => new ManyToOneField(target, o),
  OneToMany: (target: string, inverse: string, o: OneToManyOptions = {}) => new OneToManyField(target, inverse, o),
  ManyToMany: (target: string, o: ManyToManyOptions = {}) => new ManyToManyField(target, o),
  File: (o: FieldOptions = {}) => new FileField(o),
  Binary: (o: FieldOptions = {}) => new BinaryField(o),
  Json: (o: FieldOptions = {}) => new JsonField(o),
};

export { Field } from './field.js';
export type { FieldOptions, FieldType, RegistryEntry } from './field.js';
export * from './scalar-fields.js';
export * from './relational-fields.js';
