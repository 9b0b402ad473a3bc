/**
 * A model whose API methods push to a user's sockets through the module API of CONTRACTS C4
 * (`send_notification`, `send_activity_update`, `send_realtime`): once and committed, once
 * rolled back, once slow to commit. Written as module `realtime_probe` by the realtime tests.
 */
export const REALTIME_PROBE = `
import { Model, fields, send_notification, send_activity_update, send_realtime, UserError } from 'fieldforge';

export class RealtimeProbe extends Model {
  static override _api_methods = ['push', 'push_then_fail', 'push_then_wait'];
  static override fields = { name: fields.Char() };

  static async push(inputs: { user_id: number; tag: string }) {
    send_notification(inputs.user_id, { title: 'Probe', message: inputs.tag, icon: 'bell' });
    send_activity_update(inputs.user_id, { kind: 'message', body: inputs.tag });
    send_realtime(inputs.user_id, 'client_action', { action: { type: 'reload', tag: inputs.tag } });
    await RealtimeProbe.create({ name: inputs.tag });
    return 'sent';
  }

  static async push_then_fail(inputs: { user_id: number; tag: string }) {
    await RealtimeProbe.create({ name: inputs.tag });
    send_notification(inputs.user_id, { title: 'Probe', message: inputs.tag });
    throw new UserError('refused after sending');
  }

  static async push_then_wait(inputs: { user_id: number; tag: string }) {
    send_notification(inputs.user_id, { title: 'Probe', message: inputs.tag });
    await new Promise((resolve) => setTimeout(resolve, 600));
    return 'sent';
  }
}
`;
