import { Model, fields } from 'fieldforge';
import { ProjectTask } from './project_task.js';

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
    // Stored, so lists can sort and filter on it. `tasks` reads only active tasks, hence
    // `tasks.active` too: archiving a task must lower the count.
    task_count: fields.Integer({ calculate: 'calc_task_count', store: true, depends: ['tasks', 'tasks.active'] }),
  };

  // `declare` gives typed access without a class field (a field would hide the ORM's accessor).

  declare readonly task_count: number;

  /** Active tasks of the project. */
  async calc_task_count(): Promise<number> {
    // Counted in SQL rather than `(await this.tasks).length`: a project can hold thousands of
    // tasks, and loading them all on every task change would be wasteful.
    return ProjectTask.query({ project: this.id }).count();
  }
}
