/**
 * The rows a person ticked: explicit ids, or "every record the list matches" minus the ones
 * unticked since, which is what makes "select all 250" reach beyond the loaded page. Shift-click
 * ticks or unticks the whole range from the previous click.
 */
import { useRef, useState } from 'preact/hooks';

/**
 * @typedef {{allMatching: boolean, ids: Set<number>, excluded: Set<number>}} Selection
 */

const EMPTY = () => ({ allMatching: false, ids: new Set(), excluded: new Set() });

/**
 * @param {number[]} visibleIds the rows on screen, in order
 * @param {number | null} total how many records match
 */
export function useListSelection(visibleIds, total) {
  const [selection, setSelection] = useState(/** @type {Selection} */ (EMPTY()));
  const lastToggled = useRef(/** @type {number | null} */ (null));

  /** @param {number} id */
  const isSelected = (id) => (selection.allMatching ? !selection.excluded.has(id) : selection.ids.has(id));

  /**
   * @param {number[]} ids @param {boolean} on
   */
  const setMany = (ids, on) =>
    setSelection((current) => {
      const next = { allMatching: current.allMatching, ids: new Set(current.ids), excluded: new Set(current.excluded) };
      for (const id of ids) {
        if (next.allMatching) on ? next.excluded.delete(id) : next.excluded.add(id);
        else on ? next.ids.add(id) : next.ids.delete(id);
      }
      return next;
    });

  /** @param {number} id @param {MouseEvent | KeyboardEvent} event */
  const toggle = (id, event) => {
    const on = !isSelected(id);
    const from = lastToggled.current === null ? -1 : visibleIds.indexOf(lastToggled.current);
    const to = visibleIds.indexOf(id);
    lastToggled.current = id;
    if (event.shiftKey && from >= 0 && to >= 0) {
      setMany(visibleIds.slice(Math.min(from, to), Math.max(from, to) + 1), on);
    } else {
      setMany([id], on);
    }
  };

  const selectedVisible = visibleIds.filter(isSelected).length;
  /** @type {'all' | 'some' | 'none'} */
  const pageState = !visibleIds.length || !selectedVisible ? 'none' : selectedVisible === visibleIds.length ? 'all' : 'some';
  const count = selection.allMatching ? Math.max(0, (total ?? 0) - selection.excluded.size) : selection.ids.size;

  return {
    selection,
    isSelected,
    toggle,
    pageState,
    count,
    togglePage: () => setMany(visibleIds, pageState !== 'all'),
    selectAllMatching: () => setSelection({ allMatching: true, ids: new Set(), excluded: new Set() }),
    clear: () => {
      lastToggled.current = null;
      setSelection(EMPTY());
    },
    /** The selection as plain lists, for `selectionObject`. */
    plain: () => ({ allMatching: selection.allMatching, ids: [...selection.ids], excluded: [...selection.excluded] }),
  };
}
