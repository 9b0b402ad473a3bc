import { Model, fields } from 'fieldforge';

/** A person who signs in, or the identity behind a service account (no e-mail, no password). */
export class User extends Model {
  static override _verbose_name = 'User';
  static override _order_by = ['name ASC'];
  static override _name_search_fields = ['name', 'email'];
  static override fields = {
    name: fields.Char({ required: true }),
    email: fields.Char({ max_length: 255, index: true }),
    active: fields.Boolean({ default: true }),
    company: fields.ManyToOne('Company', { on_delete: 'RESTRICT' }),
    companies: fields.ManyToMany('Company', { label: 'Allowed companies' }),
    groups: fields.ManyToMany('Group', { related_name: 'users' }),
    is_service_account: fields.Boolean({ default: false, readonly: true }),
    password_hash: fields.Char({ max_length: 255, internal: true }),
  };
}
