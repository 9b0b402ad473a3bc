/**
 * `Ctrl+S` (`⌘S`) in a form: saves when there is something to save. A date or number is read
 * when its input loses focus, so the input being typed in is left first (and focused again
 * after), and what it just read counts as an edit.
 */

/**
 * @param {{
 *   valuesRef: {current: Record<string, any>}, unreadableRef: {current: Record<string, string>},
 *   busy: boolean, pending: boolean, save: () => Promise<unknown>,
 * }} options `pending`: edits, or a new record
 * @returns {(e: KeyboardEvent) => void}
 */
export function saveShortcut({ valuesRef, unreadableRef, busy, pending, save }) {
  return (e) => {
    if (!((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's')) return;
    e.preventDefault();
    const before = valuesRef.current;
    const typing = /** @type {HTMLElement | null} */ (document.activeElement);
    typing?.blur();
    const edited = valuesRef.current !== before || Object.keys(unreadableRef.current).length > 0;
    if (!busy && (pending || edited)) void save();
    typing?.focus();
  };
}
