/**
 * Dragging a row by its handle with pointer events (mouse, pen and touch alike; HTML5 drag and
 * drop does not work with touch): the pointer is captured on the handle, the row under it is the
 * drop target (the drop line is drawn above or below it), and the drop reports the new index.
 * Escape cancels a drag.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * @typedef {{id: number, from: number, over: number}} DragState `over`: the index the row would take
 */

/**
 * @param {(id: number, to: number) => void} onDrop
 */
export function useRowDrag(onDrop) {
  const [drag, setDrag] = useState(/** @type {DragState | null} */ (null));
  const current = useRef(/** @type {DragState | null} */ (null));
  current.current = drag;

  useEffect(() => {
    if (!drag) return undefined;
    /** @param {KeyboardEvent} event */
    const cancel = (event) => {
      if (event.key === 'Escape') setDrag(null);
    };
    document.addEventListener('keydown', cancel);
    return () => document.removeEventListener('keydown', cancel);
  }, [Boolean(drag)]);

  /** The record rows of the handle's table body, in order. @param {Element} handle */
  const rowsOf = (handle) => /** @type {HTMLElement[]} */ ([...(handle.closest('tbody')?.querySelectorAll('tr[data-id]') ?? [])]);

  /**
   * The index a row dragged to `y` takes among `rows` once moved: the gap the pointer is in
   * (rows whose middle is above it), less one when that gap is below the row's own place.
   * @param {HTMLElement[]} rows @param {number} y @param {number} from
   */
  const indexAt = (rows, y, from) => {
    let gap = 0;
    for (const row of rows) {
      const box = row.getBoundingClientRect();
      if (y > box.top + box.height / 2) gap += 1;
    }
    return gap > from ? gap - 1 : gap;
  };

  /** Handlers for a row's handle. @param {number} id */
  const handleProps = (id) => ({
    /** @param {PointerEvent} event */
    onPointerDown: (event) => {
      if (event.button !== 0) return;
      const handle = /** @type {HTMLElement} */ (event.currentTarget);
      const rows = rowsOf(handle);
      const from = rows.findIndex((r) => Number(r.dataset.id) === id);
      if (from < 0) return;
      event.preventDefault();
      handle.setPointerCapture(event.pointerId);
      setDrag({ id, from, over: from });
    },
    /** @param {PointerEvent} event */
    onPointerMove: (event) => {
      const state = current.current;
      if (!state || state.id !== id) return;
      const over = indexAt(rowsOf(/** @type {HTMLElement} */ (event.currentTarget)), event.clientY, state.from);
      if (over !== state.over) setDrag({ ...state, over });
    },
    /** @param {PointerEvent} event */
    onPointerUp: (event) => {
      const state = current.current;
      if (!state || state.id !== id) return;
      const over = indexAt(rowsOf(/** @type {HTMLElement} */ (event.currentTarget)), event.clientY, state.from);
      setDrag(null);
      if (over !== state.from) onDrop(id, over);
    },
    onPointerCancel: () => setDrag(null),
  });

  return { drag, handleProps };
}
