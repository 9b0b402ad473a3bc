/** `Message.send_activity_update(user_id, payload)` is C4's `send_activity_update` (C5 precision 5). */
import { send_activity_update } from 'fieldforge';

export function sendActivityUpdate(user_id: number, payload: Record<string, unknown>): void {
  send_activity_update(user_id, payload);
}
