/** Toasts of the platform script (`window.fieldforge.toast`) for the form, its fields and dialogs. */

/** @param {'success' | 'error'} type @param {string} message */
function show(type, message) {
  window.fieldforge?.toast.show({ type, message });
}

export const notify = Object.freeze({
  /** @param {string} message */
  success: (message) => show('success', message),
  /** @param {string} message */
  error: (message) => show('error', message),
});
