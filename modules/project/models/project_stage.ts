import { Model, fields } from 'fieldforge';

/** A step of the task pipeline (New → In Progress → … → Done), shared by all projects. */
export class ProjectStage extends Model {
  static override _verbose_name = 'Stage';
  static override _order_by = ['sequence ASC', 'id ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    sequence: fields.Integer({ default: 10 }),
    is_closed: fields.Boolean({ default: false, description: 'Tasks in this stage are finished (done or cancelled)' }),
    fold: fields.Boolean({ default: false, description: 'Shown folded in pipeline views' }),
  };
}
