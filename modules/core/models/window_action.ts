import { Model, fields } from 'fieldforge';

/** Opens a model in the given view modes (`List, Form`, or in YAML the list `[List, Form]`: stored as `List, Form`). */
export class WindowAction extends Model {
  static override _verbose_name = 'Window Action';
  static override fields = {
    name: fields.Char({ required: true }),
    model: fields.Char({ required: true }),
    modes: fields.Char({ default: 'List, Form', list: true }),
    default_view: fields.Char({ default: 'List' }),
    views: fields.ManyToMany('UiView'),
  };
}
