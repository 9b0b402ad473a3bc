/**
 * What module authors import: `import { Model, fields, extendModel } from 'fieldforge'`.
 */
export { Model, type ModelClass, type ModelChange, type ModelChangeDone, type StateLock } from './orm/model.js';
export { fields } from './orm/fields/index.js';
export { extendModel } from './orm/model-extension.js';
export { defineModelTrait, type ModelTrait } from './orm/model-trait.js';
export { defineInstallHook, type InstallHook } from './modules/install-hook.js';
export { defineRecurringJob, type RecurringJob } from './orm/recurring-job.js';
export { QuerySet } from './orm/queryset.js';
export { modelOf } from './orm/model-lookup.js';
export { currentEnv, withEnv, type Env } from './orm/env.js';
/** Raw SQL in module code: the platform's one tag (`sql\`… ${value} …\`.execute(currentEnv().work.trx)`), never Kysely's. */
export { sql, type SqlFragment } from './db/sql-fragment.js';
export type { SqlExecutor } from './db/sql-executor.js';
export {
  FieldForgeError, ValidationError, UserError, AccessError, NotFound, BadRequest, AuthenticationError, PayloadTooLarge, TooManyRequests,
} from './errors.js';
export { checkPasswordRule } from './auth/password-rule.js';
export { hashPassword } from './auth/passwords.js';
export { roundToStep } from './orm/round-to-step.js';
export type { VisitorMessage, VisitorAttachment, VisitorHistory } from './api/livechat.js';
export { send_notification, send_activity_update, send_activity_updates, send_realtime, send_record_viewers, send_livechat_visitor, type NotificationPayload } from './realtime/send.js';
