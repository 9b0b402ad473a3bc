import { Model, fields } from 'fieldforge';

/** A List or Form layout of a model; `arch` is the tree of rows, columns and fields. */
export class UiView extends Model {
  static override _verbose_name = 'View';
  static override _order_by = ['model ASC', 'type ASC', 'name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    type: fields.Selection({ choices: ['List', 'Form'], required: true }),
    model: fields.Char({ required: true, index: true }),
    arch: fields.Json({ required: true }),
  };
}
