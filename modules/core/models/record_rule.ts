import { Model, fields } from 'fieldforge';

/**
 * A row filter on one model: records that fail it are invisible (read) or untouchable
 * (write/create/delete) for the users it applies to. A rule without groups is global and always
 * applies; rules with groups apply to members of any of them, and several such rules add up (a
 * record passes when it passes any of them). The filter is a Q-expression that may use
 * `user_id`, `company_id` and `company_ids`.
 */
export class RecordRule extends Model {
  static override _verbose_name = 'Record Rule';
  static override _order_by = ['model ASC', 'name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    model: fields.Char({ required: true, index: true, description: 'Model name, e.g. ProjectTask' }),
    filter: fields.Text({ required: true, description: "Q-expression, e.g. Q(assignee__user=user_id)" }),
    groups: fields.ManyToMany('Group', { related_name: 'record_rules' }),
    active: fields.Boolean({ default: true }),
    perm_read: fields.Boolean({ default: true }),
    perm_write: fields.Boolean({ default: true }),
    perm_create: fields.Boolean({ default: true }),
    perm_delete: fields.Boolean({ default: true }),
  };
}
