import { Model, UserError, fields } from 'fieldforge';
import { ProjectStage } from './project_stage.js';
// Type-only imports: they vanish at runtime, so two model files may refer to each other freely.
import type { ProjectProject } from './project_project.js';
import type { ProjectTag } from './project_tag.js';

/** The first stage of the pipeline (the stages' own order): where a new task starts. */
async function firstStage(): Promise<number | null> {
  return (await ProjectStage.query().first())?.id ?? null;
}

export class ProjectTask extends Model {
  static override _verbose_name = 'Task';
  static override _order_by = ['sequence ASC', 'deadline ASC', 'id ASC'];
  // Only methods listed here can be called remotely: POST /api/execute/ProjectTask/action_close.
  static override _api_methods = ['action_close', 'action_reassign'];
  // A conversation on every task (the messaging module's chatter); the assignee follows the task.
  static override _mail_thread = true;
  static override _follow_fields = ['assignee'];
  // The dialog asking for action_reassign's inputs (POST /api/action-meta/ProjectTask/action_reassign).
  static override _wizards = {
    action_reassign: {
      title: 'Reassign tasks',
      fields: {
        assignee: fields.ManyToOne('Contact', { label: 'Assign to', required: true }),
        deadline: fields.Date({ label: 'New deadline', description: "Leave empty to keep each task's deadline" }),
      },
      arch: [{ row: [{ field: { name: 'assignee' } }, { field: { name: 'deadline' } }] }],
      defaults: 'default_reassign',
    },
  };
  // A closed task is closed already: Close is not offered there, and refused.
  static override _state_locks = [{ when: 'Q(stage__is_closed=True)', state: 'stage', methods: ['action_close'] }];
  // A sub-task belongs to its parent's project: choosing the parent in a form fills the project.
  static override _ui_effects = { parent: 'effect_parent' };
  static override fields = {
    name: fields.Char({ required: true, max_length: 255 }),
    description: fields.Text(),
    project: fields.ManyToOne('ProjectProject', { related_name: 'tasks', on_delete: 'CASCADE' }),
    // RESTRICT: a stage that still holds tasks cannot be deleted. A new task starts in the first stage.
    stage: fields.ManyToOne('ProjectStage', { related_name: 'tasks', on_delete: 'RESTRICT', default: firstStage }),
    priority: fields.Selection({
      choices: [['0', 'Normal'], ['1', 'Important'], ['2', 'Urgent']],
      default: '0',
    }),
    deadline: fields.Date({ index: true }),
    tags: fields.ManyToMany('ProjectTag', { related_name: 'tasks' }),
    parent: fields.ManyToOne('ProjectTask', { label: 'Parent task', related_name: 'subtasks', on_delete: 'CASCADE' }),
    // A Contact (from the contacts module), not a User: work can be assigned to people without a login.
    assignee: fields.ManyToOne('Contact', { related_name: 'assigned_tasks', on_delete: 'SET NULL' }),
    sequence: fields.Integer({ default: 10 }),
    planned_hours: fields.Float({ precision: 2, default: 0 }),
    effective_hours: fields.Float({ precision: 2, default: 0 }),
    remaining_hours: fields.Float({
      precision: 2,
      calculate: 'calc_remaining_hours',
      store: true,
      depends: ['planned_hours', 'effective_hours'],
    }),
    // `subtasks` reads only active sub-tasks, hence `subtasks.active` too.
    subtask_count: fields.Integer({ calculate: 'calc_subtask_count', store: true, depends: ['subtasks', 'subtasks.active'] }),
    active: fields.Boolean({ default: true }),
  };

  // `declare` gives typed access without a class field (a field would hide the ORM's accessor).
  // Scalar fields read synchronously; relational ones are promises, loaded for the whole batch.
  declare name: string;
  declare planned_hours: number | null;
  declare effective_hours: number | null;
  declare readonly remaining_hours: number | null;
  declare readonly subtask_count: number;
  declare project: Promise<ProjectProject | null>;
  declare stage: Promise<ProjectStage | null>;
  declare deadline: string | null;
  declare tags: Promise<ProjectTag[]>;
  declare parent: Promise<ProjectTask | null>;
  declare subtasks: Promise<ProjectTask[]>;

  calc_remaining_hours(): number {
    return (this.planned_hours ?? 0) - (this.effective_hours ?? 0);
  }

  async calc_subtask_count(): Promise<number> {
    // Awaiting `subtasks` loads them for every task of the batch in one query.
    const subtasks = await this.subtasks;
    return subtasks.length;
  }

  /**
   * What the reassign dialog proposes for the selected tasks (`context.active_ids`): their
   * assignee and deadline when they all share one, read as the caller.
   */
  static async default_reassign(context: { active_ids?: number[] }): Promise<Record<string, unknown>> {
    const ids = context.active_ids ?? [];
    if (!ids.length) return {};
    const tasks = await ProjectTask.query({ id__in: ids }).with_archived().read(['assignee', 'deadline']);
    const shared = (values: unknown[]) => (values.length && values.every((v) => v === values[0]) ? values[0] : undefined);
    const assignee = shared(tasks.map((t) => (t.assignee as { id: number } | null)?.id ?? null));
    const deadline = shared(tasks.map((t) => t.deadline ?? null));
    return { ...(assignee ? { assignee } : {}), ...(deadline ? { deadline } : {}) };
  }

  /**
   * The reassign wizard, once per selected task: gives it to `assignee` and, when `deadline` is
   * given, moves its deadline (inputs checked and converted by the wizard's fields first). The
   * dialog closes and the list behind reloads.
   */
  async action_reassign(inputs: { assignee: number; deadline: string | null }, _context: Record<string, unknown> = {}): Promise<{ close: true; reload: true }> {
    // Assigned, not written one by one: the same values on every selected task are one UPDATE.
    // (Object.assign goes through the field's setter like `=`, which the awaited type of a
    // relational field would not let TypeScript accept.)
    Object.assign(this, { assignee: inputs.assignee });
    if (inputs.deadline) this.deadline = inputs.deadline;
    return { close: true, reload: true };
  }

  /** Form effect of `parent`: a sub-task is filed in its parent's project. */
  async effect_parent(): Promise<void> {
    const parent = await this.parent;
    if (parent) Object.assign(this, { project: (await parent.project)?.id ?? null });
  }

  /**
   * Moves the task to the first closed stage. Called through `/api/execute` with the request's
   * inputs and context, which this action does not need.
   */
  async action_close(_inputs: Record<string, unknown> = {}, _context: Record<string, unknown> = {}): Promise<{ stage: number }> {
    const closed = await ProjectStage.query('Q(is_closed=True)').order_by('sequence ASC', 'id ASC').first();
    if (!closed) throw new UserError('Cannot close the task: no stage is marked as closed. Mark one as closed in Project > Configuration > Stages.');
    await this.write({ stage: closed.id });
    return { stage: closed.id };
  }
}
