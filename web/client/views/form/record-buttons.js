import { CHATTER_METHODS, isMailThread } from '../../messaging/mail-thread.js';

/**
 * Which of the model's actions a saved record's toolbar offers: its record methods (a
 * model-level one takes no ids) that have no wizard, are not the Print a report button already
 * is, are not the chatter's own (posting and following are done in the chatter), and that the
 * record's state does not refuse (Confirm on a confirmed order); and its wizards the state allows.
 * @param {{api_methods: string[], record_methods?: string[], wizards: {method: string, title: string}[], reports: {identifier: string | null}[], mail_thread?: boolean}} modelInfo
 * @param {{methods: Set<string>}} locks
 */
export function recordButtons(modelInfo, locks) {
  const wizardMethods = new Set(modelInfo.wizards.map((w) => w.method));
  const reportIdentifiers = new Set(modelInfo.reports.map((r) => r.identifier));
  const chatter = isMailThread(modelInfo) ? new Set(CHATTER_METHODS) : new Set();
  const methods = (modelInfo.record_methods ?? modelInfo.api_methods)
    .filter((m) => !wizardMethods.has(m) && !chatter.has(m) && !(m === 'action_print' && reportIdentifiers.size) && !locks.methods.has(m));
  const wizards = modelInfo.wizards.filter((w) => !locks.methods.has(w.method));
  return { methods, wizards };
}
