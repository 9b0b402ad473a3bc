/**
 * An id unique in the document for the component's lifetime. Preact's `useId` numbers ids per
 * render root, so two roots on one page (the view and a confirmation rendered into a node of its
 * own) hand out the same `P0-0`, and a label or `aria-labelledby` then points at the wrong element.
 */
import { useState } from 'preact/hooks';

let issued = 0;

/** @param {string} prefix */
export function useUniqueId(prefix) {
  const [id] = useState(() => `${prefix}-${++issued}`);
  return id;
}
