/**
 * Declarations the registry checks when it composes a model, so a mistake in a module fails its
 * install with a message naming the model instead of misbehaving later: `_owned_by` and
 * `editable`.
 */
import { describe, expect, it } from 'vitest';
import { Model, fields } from 'fieldforge';
import { ModuleError } from '../../src/errors.js';
import { Registry } from '../../src/orm/registry.js';

const build = (...declarations: (typeof Model)[]) => () => Registry.build([{ id: 'probe', declarations, extensions: [] }]);

describe('_owned_by', () => {
  it('names a stored Char (the owner model) and a stored Integer (the owner id)', () => {
    class Swapped extends Model {
      static override _owned_by = { model: 'owner_id', record: 'owner_model' };
      static override fields = { owner_model: fields.Char(), owner_id: fields.Integer() };
    }
    class Missing extends Model {
      static override _owned_by = { model: 'res_model', record: 'res_id' };
      static override fields = { res_model: fields.Char() };
    }
    class Owned extends Model {
      static override _owned_by = { model: 'res_model', record: 'res_id' };
      static override fields = { res_model: fields.Char(), res_id: fields.Integer() };
    }
    expect(build(Swapped)).toThrow(ModuleError);
    expect(build(Swapped)).toThrow(/Swapped\._owned_by.*stored Char and a stored Integer/);
    expect(build(Missing)).toThrow(/Missing\._owned_by/);
    expect(build(Owned)().meta('Owned').ownedBy).toEqual({ model: 'res_model', record: 'res_id' });
  });
});

describe('editable', () => {
  it('applies to a stored computed field without a setter', () => {
    class NotStored extends Model {
      static override fields = { label: fields.Char({ calculate: 'calc_label', editable: true }) };
      calc_label() { return 'x'; }
    }
    class Plain extends Model {
      static override fields = { label: fields.Char({ editable: true }) };
    }
    class Fine extends Model {
      static override fields = { label: fields.Char({ calculate: 'calc_label', store: true, editable: true, depends: [] }) };
      calc_label() { return 'x'; }
    }
    expect(build(NotStored)).toThrow(/NotStored\.label: 'editable' applies to a stored computed field/);
    expect(build(Plain)).toThrow(ModuleError);
    expect(build(Fine)().meta('Fine').fields.get('label')!.isSettable).toBe(true);
  });
});
