/**
 * Typed text a widget cannot read as a value (`31/02/2026`), by field: shown at the field, it
 * blocks Save; Discard and a reload draw the widgets afresh (`revision`, the layout's key) to
 * drop it.
 */
import { useRef, useState } from 'preact/hooks';

export function useUnreadableFields() {
  const [unreadable, setUnreadable] = useState(/** @type {Record<string, string>} */ ({}));
  const unreadableRef = useRef(unreadable);
  const [revision, setRevision] = useState(0);

  /** @param {string} name @param {string | null} message */
  const note = (name, message) => {
    const current = unreadableRef.current;
    if ((current[name] ?? null) === message) return;
    const next = { ...current };
    if (message) next[name] = message;
    else delete next[name];
    unreadableRef.current = next;
    setUnreadable(next);
  };

  const forget = () => {
    if (!Object.keys(unreadableRef.current).length) return;
    unreadableRef.current = {};
    setUnreadable({});
    setRevision((r) => r + 1);
  };

  return { unreadable, unreadableRef, revision, note, forget };
}
