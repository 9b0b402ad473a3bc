/**
 * The one question before leaving unsaved edits (CONTRACTS C2): the view holding edits (the form)
 * registers a function answering whether it has any; the shell asks it before every navigation
 * (hash change, menu, palette, sign-out) and the browser asks before the page unloads.
 *
 *   setLeaveGuard(() => dirty);   // while editing
 *   setLeaveGuard(null);          // saved, discarded or unmounted
 */
import { confirmDialog } from './ui/dialog.js';

/** @type {(() => boolean) | null} */
let guard = null;

/** @param {(() => boolean) | null} fn returns true while there are unsaved edits */
export function setLeaveGuard(fn) {
  guard = fn;
}

/** True when the registered view says it holds unsaved edits. */
export function hasUnsavedEdits() {
  try {
    return guard !== null && guard() === true;
  } catch (err) {
    console.error('FieldForge: the leave guard failed; assuming unsaved edits', err);
    return true;
  }
}

/**
 * Resolves true when leaving is fine: nothing unsaved, or the person chose to discard it (the
 * guard is then cleared, as the edits are being thrown away).
 * @returns {Promise<boolean>}
 */
export async function confirmLeave() {
  if (!hasUnsavedEdits()) return true;
  const discard = await confirmDialog({
    title: 'Discard unsaved changes?',
    message: 'This record has changes that are not saved. Leaving now loses them.',
    confirm: 'Discard changes',
    cancel: 'Stay',
    danger: true,
  });
  if (discard) guard = null;
  return discard;
}

// Closing the tab or reloading: the browser's own prompt (its wording is the browser's).
window.addEventListener('beforeunload', (event) => {
  if (!hasUnsavedEdits()) return;
  event.preventDefault();
  event.returnValue = '';
});
