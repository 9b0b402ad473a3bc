import { Model, fields } from 'fieldforge';

/**
 * A login-less account that API keys belong to. Its `user` is the identity recorded in audit
 * columns of what its keys write; its groups are the keys' access.
 */
export class ServiceAccount extends Model {
  static override _verbose_name = 'Service Account';
  static override _order_by = ['name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    active: fields.Boolean({ default: true }),
    groups: fields.ManyToMany('Group'),
    company: fields.ManyToOne('Company', { on_delete: 'RESTRICT' }),
    user: fields.ManyToOne('User', { readonly: true, on_delete: 'RESTRICT' }),
  };
}
