/**
 * Models for the record-changed tests (CONTRACTS C4 "Record-changed pings"), written as module
 * `change_probe`: `ChangeProbe` with plain fields, a stored computed `total` (recomputed from `qty`
 * and `price`: a cascade, never pinged), a sequence for resequence, tags (ManyToMany), and API
 * methods that write by assignment, by queryset `update`, twice in one transaction, or then fail,
 * and a wizard (`action_renote`);
 * `ChangeProbeLine`, whose `amount` feeds its probe's stored `lines_total` (a cascade to another record).
 */
export const CHANGE_PROBE = `
import { Model, fields, UserError } from 'fieldforge';

export class ChangeProbeTag extends Model {
  static override fields = { name: fields.Char() };
}

export class ChangeProbe extends Model {
  static override _order_by = ['sequence ASC'];
  static override _api_methods = ['rename', 'rename_then_fail', 'bump_notes', 'write_twice', 'action_renote'];
  static override _wizards = {
    action_renote: {
      title: 'Change the note',
      fields: { note: fields.Char({ label: 'New note', required: true }) },
      arch: [{ row: [{ field: { name: 'note' } }] }],
    },
  };
  static override fields = {
    name: fields.Char(),
    note: fields.Char(),
    qty: fields.Integer({ default: 0 }),
    price: fields.Float({ default: 0 }),
    sequence: fields.Integer(),
    total: fields.Float({ calculate: 'calc_total', store: true, depends: ['qty', 'price'] }),
    lines_total: fields.Float({ calculate: 'calc_lines_total', store: true, depends: ['lines.amount'] }),
    tags: fields.ManyToMany('ChangeProbeTag'),
  };

  calc_total() {
    return (this.qty ?? 0) * (this.price ?? 0);
  }

  async calc_lines_total() {
    let sum = 0;
    for (const line of await this.lines) sum += line.amount ?? 0;
    return sum;
  }

  async rename(inputs: { name: string }) {
    this.name = inputs.name;
    return true;
  }

  async rename_then_fail(inputs: { name: string }) {
    await this.write({ name: inputs.name });
    throw new UserError('refused after writing');
  }

  static async bump_notes(inputs: { ids: number[]; note: string }) {
    await ChangeProbe.query({ id__in: inputs.ids }).update({ note: inputs.note });
    return true;
  }

  /** A wizard's method: its inputs validated against the wizard's fields, run on each selected record. */
  async action_renote(inputs: { note: string }) {
    this.note = inputs.note;
    return { close: true, reload: true };
  }

  async write_twice(inputs: { name: string; qty: number }) {
    await this.write({ name: inputs.name });
    await this.write({ qty: inputs.qty });
    return true;
  }
}

export class ChangeProbeLine extends Model {
  static override fields = {
    probe: fields.ManyToOne('ChangeProbe', { related_name: 'lines', on_delete: 'CASCADE' }),
    amount: fields.Float({ default: 0 }),
  };
}
`;

/** Full rights on the probe's models for ordinary signed-in users. */
export const CHANGE_PROBE_ACCESS = ['ChangeProbeTag', 'ChangeProbe', 'ChangeProbeLine'].map((m) => `- data_type: ModelAccess
  identifier: access_${m.toLowerCase()}_user
  name: ${m} / users
  model: ${m}
  group: core.group_user
  read_perm: true
  write_perm: true
  create_perm: true
  delete_perm: true
`).join('');
