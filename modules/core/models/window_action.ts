import { Model, fields } from 'fieldforge';

/**
 * Opens a model in the given view modes (`List, Form`, or in YAML the list `[List, Form]`: stored as
 * `List, Form`), or — with `client_view` — one of the web client's own screens (`api_keys`,
 * `modules`, `profile`, …: `web/client/settings/screens.js`). `model` always names the model whose
 * read right decides who sees the action's menus; `groups`, when set, narrows that further to the
 * members of those groups (Odoo's menu groups: the Users list is an administrator's screen even
 * though every user may read user names).
 */
export class WindowAction extends Model {
  static override _verbose_name = 'Window Action';
  static override fields = {
    name: fields.Char({ required: true }),
    model: fields.Char({ required: true }),
    modes: fields.Char({ default: 'List, Form', list: true }),
    default_view: fields.Char({ default: 'List' }),
    views: fields.ManyToMany('UiView'),
    client_view: fields.Char({ max_length: 64, description: 'Key of a web client screen that replaces the list and form views' }),
    groups: fields.ManyToMany('Group', { description: 'Only members of these groups see the menus of this action; empty = everyone who can read its model' }),
  };
}
