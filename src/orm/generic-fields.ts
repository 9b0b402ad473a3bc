/**
 * The columns every model has (spec §2.1): id, identifier, audit columns and the computed
 * display_name. They are ordinary bound fields, so the registry, filters and reads treat them
 * like declared ones.
 */
import { Field, type RegistryEntry } from './fields/field.js';
import { CharField, DatetimeField, IntegerField } from './fields/scalar-fields.js';
import { ManyToOneField } from './fields/relational-fields.js';

/** `id`: identity primary key, never written. */
export class IdField extends IntegerField {
  override get isSettable(): boolean {
    return false;
  }
  override describe(): RegistryEntry {
    return { type: 'Integer', label: 'ID', readonly: true };
  }
}

/** `display_name`: computed from the model's `_rec_name` in SQL, never stored. */
export class DisplayNameField extends CharField {
  override get isStored(): boolean {
    return false;
  }
  override get isComputed(): boolean {
    return true;
  }
  override get isSettable(): boolean {
    return false;
  }
}

export const AUDIT_FIELDS = ['created_date', 'created_by', 'updated_date', 'updated_by'] as const;

/** Generic fields in the order they appear in the registry. */
export function genericFields(hasUserModel: boolean): [string, Field][] {
  const userRef = (label: string): Field =>
    hasUserModel
      ? new ManyToOneField('User', { label, readonly: true, on_delete: 'SET NULL' })
      : new IntegerField({ label, readonly: true });
  return [
    ['id', new IdField({ label: 'ID' })],
    ['identifier', new CharField({ label: 'External identifier', max_length: 255 })],
    ['display_name', new DisplayNameField({ label: 'Display name' })],
    ['created_date', new DatetimeField({ label: 'Created on', readonly: true })],
    ['created_by', userRef('Created by')],
    ['updated_date', new DatetimeField({ label: 'Updated on', readonly: true })],
    ['updated_by', userRef('Updated by')],
  ];
}

/** Generic keys a create body may set although they are read-only on update (spec §4.4 rule 4). */
export const CREATE_ONLY_KEYS = new Set(['identifier', 'created_date']);
