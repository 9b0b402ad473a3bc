/**
 * Whether a model has the chatter (`static _mail_thread = true`, CONTRACTS C5): its model info says
 * `mail_thread: true`, or — where the server does not say it in so many words — its API methods
 * include the three the chatter adds. Those methods and the thread's fields are the chatter's own,
 * so the form's toolbar does not offer them as buttons, nor a default form their fields.
 */

export const CHATTER_METHODS = Object.freeze(['message_post', 'message_follow', 'message_unfollow']);

/** The thread's fields, which the chatter shows (a form built without an arch leaves them out). */
export const THREAD_FIELDS = Object.freeze(['messages', 'followers']);

/** @param {{mail_thread?: boolean, api_methods?: string[]}} modelInfo */
export function isMailThread(modelInfo) {
  if (typeof modelInfo.mail_thread === 'boolean') return modelInfo.mail_thread;
  const methods = modelInfo.api_methods ?? [];
  return CHATTER_METHODS.every((m) => methods.includes(m));
}
