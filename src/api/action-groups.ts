/**
 * Whether the caller belongs to the audience of a `WindowAction` restricted by `groups` (Odoo's
 * menu groups): empty means everyone who may read the action's model; otherwise the caller must be
 * a member of one of them. Code running elevated (no access profile) belongs to every audience.
 */
import { activeAccess } from '../access/record-access.js';

export function inActionAudience(groupIds: readonly number[] | null | undefined): boolean {
  if (!groupIds || groupIds.length === 0) return true;
  const access = activeAccess();
  if (!access) return true;
  return groupIds.some((id) => access.groupIds.includes(id));
}
