import { Model, fields } from 'fieldforge';

/** A project: a customer-facing piece of work whose `tasks` (reverse of ProjectTask.project) it counts. */
export class ProjectProject extends Model {
  static override _verbose_name = 'Project';
  static override _order_by = ['name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    description: fields.Text(),
    manager: fields.ManyToOne('User', { on_delete: 'SET NULL' }),
    customer: fields.ManyToOne('Contact', { on_delete: 'SET NULL' }),
    active: fields.Boolean({ default: true }),
    color: fields.Integer({ default: 0, description: 'Index in the UI colour palette' }),
    // Computed when read, not stored: a stored count would be recounted on every task change and
    // would make every task created in a project wait on that project's row lock.
    task_count: fields.Integer({ calculate: 'calc_task_count' }),
  };

  // `declare` gives typed access without a class field (a field would hide the ORM's accessor).

  declare readonly task_count: Promise<number>;

  /** Active tasks of the project, counted in SQL for every project read together. */
  async calc_task_count(): Promise<number> {
    return this.count_related('tasks');
  }
}
