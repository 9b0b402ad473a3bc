/**
 * A model whose model code queues after-commit work the way messaging will: writing `trigger` (an
 * input-only field with a setter) sends a notification with the tag to the acting user (user 1
 * for the platform), deletes the attachment named `uow-<tag>.txt` (its bytes are released after
 * commit), and refuses the record when the tag starts with `refused`. `caught` creates one record,
 * then another inside a savepoint of its own, and catches that one's refusal. Written as module
 * `uow_probe` by the unit-of-work tests.
 */
export const UOW_PROBE = `
import { Model, QuerySet, ValidationError, currentEnv, fields, send_notification } from 'fieldforge';

export class UowProbe extends Model {
  static override _api_methods = ['caught'];
  static override fields = {
    name: fields.Char({ required: true }),
    trigger: fields.Char({ calculate: 'calc_trigger', setter: 'set_trigger' }),
  };

  calc_trigger(): null {
    return null;
  }

  async set_trigger(value: unknown): Promise<void> {
    const tag = String(value);
    const env = currentEnv();
    send_notification(env.uid ?? 1, { title: 'UoW probe', message: tag });
    await new QuerySet(env.registry.meta('Attachment')).filter({ name: \`uow-\${tag}.txt\` }).delete();
    if (tag.startsWith('refused')) throw new ValidationError(\`The probe refuses \${tag}\`);
  }

  /** A record kept, then a nested call that raises inside a savepoint and is caught here. */
  static async caught(inputs: { kept: string; refused: string }): Promise<string> {
    await UowProbe.create({ name: inputs.kept, trigger: inputs.kept });
    try {
      await currentEnv().work.savepoint(() => UowProbe.create({ name: inputs.refused, trigger: inputs.refused }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
    }
    return 'done';
  }
}
`;
