/**
 * The record a form edits: its shape (`form-shape.js`), the values as saved and as edited, the
 * messages at fields (`problems`) and for the form (`failure`), whether it is busy, what the
 * record's state locks, and whether the record could not be read at all. `load` reads the record
 * (or a new one's defaults, with what `ui-effect` adds) into the form; it runs whenever the
 * fields, the arch or the record change, and only the latest read answers.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.js';
import { formShape } from './form-shape.js';
import { formValues, registryDefaults, withCurrencies } from './initial-values.js';
import { mergeEffect } from './record-values.js';
import { NO_LOCKS, heldLocks } from './state-locks.js';

/**
 * @typedef {import('./form-shape.js').FormShape} FormShape
 * @typedef {{label: string, effect_fields: string[], archivable?: boolean, state_locks?: import('./state-locks.js').StateLock[]}} RecordModelInfo
 */

/** @param {unknown} err */
export const messageOf = (err) => (err instanceof Error ? err.message : String(err));

/**
 * @param {{
 *   model: string, id: number | null, modelInfo: RecordModelInfo,
 *   fields: Record<string, import('../../fields/field-props.js').FieldInfo>, arch: any[],
 *   changes: {changeSeq: {current: number}, setChange: (update: (c: any) => any) => void},
 *   forgetUnreadable: () => void,
 * }} options
 */
export function useFormRecord({ model, id, modelInfo, fields, arch, changes, forgetUnreadable }) {
  const [shape, setShape] = useState(/** @type {FormShape | null} */ (null));
  const [saved, setSaved] = useState(/** @type {Record<string, any> | null} */ (null));
  const [values, setValues] = useState(/** @type {Record<string, any>} */ ({}));
  const [problems, setProblems] = useState(/** @type {Record<string, string>} */ ({}));
  const [failure, setFailure] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(true);
  // What the record's state locks (a confirmed order's lines), read with the record.
  const [locks, setLocks] = useState(NO_LOCKS);
  // The record could not be read (it does not exist, or not for this user): nothing to save,
  // delete or run; the form offers only the way back to the list.
  const [unreadableRecord, setUnreadableRecord] = useState(false);
  const savedRef = useRef(saved);
  savedRef.current = saved;
  const valuesRef = useRef(values);
  valuesRef.current = values;
  const loadSeq = useRef(0);

  /** Reads the record (or a new one's defaults) into the form. @param {FormShape} s */
  const load = async (s) => {
    const seq = ++loadSeq.current;
    // A change announced before this read is in what it reads; one announced during it may not be.
    const seenChange = changes.changeSeq.current;
    setBusy(true);
    setFailure(null);
    setUnreadableRecord(false);
    forgetUnreadable();
    try {
      if (id !== null) {
        const [row, held] = await Promise.all([
          /** @type {Promise<Record<string, any>>} */ (api.fetchRecord(model, id, { fields: s.paths })),
          heldLocks(model, id, modelInfo.state_locks, Boolean(modelInfo.archivable)),
        ]);
        if (seq !== loadSeq.current) return;
        const loaded = formValues(s, row);
        setLocks(held);
        setSaved(loaded);
        setValues(loaded);
        changes.setChange((c) => (c && c.seq <= seenChange ? null : c));
      } else {
        let initial = registryDefaults(s);
        try {
          const fieldName = modelInfo.effect_fields.find((n) => s.names.includes(n)) ?? s.names[0];
          if (fieldName) initial = mergeEffect(s.fields, initial, /** @type {Record<string, any>} */ (await api.uiEffect(model, { vals: {}, field_name: fieldName })));
        } catch {
          // the registry's defaults stay; the server applies its own on create
        }
        initial = await withCurrencies(s, initial);
        if (seq !== loadSeq.current) return;
        setLocks(NO_LOCKS);
        setSaved(initial);
        setValues(initial);
      }
      setProblems({});
    } catch (err) {
      if (seq !== loadSeq.current) return;
      // A record read before (a save's reload) stays on screen with the message; none: none to act on.
      if (id !== null && !savedRef.current) {
        setUnreadableRecord(true);
        setFailure(err instanceof ApiError && err.status === 404
          ? `This ${modelInfo.label.toLowerCase()} (#${id}) does not exist: it may have been deleted.`
          : messageOf(err));
      } else setFailure(messageOf(err));
    } finally {
      if (seq === loadSeq.current) setBusy(false);
    }
  };

  useEffect(() => {
    let live = true;
    // The fields are drawn once the record (or a new one's defaults) is there: typing into fields
    // drawn earlier would be wiped when it arrives. The record just created keeps its form.
    setSaved((prev) => (prev && id !== null && prev.id === id ? prev : null));
    setBusy(true);
    loadSeq.current++; // a load of the record shown before answers into nothing
    formShape(fields, arch).then(
      (s) => { if (live) { setShape(s); void load(s); } },
      (err) => { if (live) { setFailure(messageOf(err)); setBusy(false); } },
    );
    return () => { live = false; };
  }, [fields, arch, id]);

  return {
    shape, saved, setSaved, savedRef, values, setValues, valuesRef, problems, setProblems, failure, setFailure,
    busy, setBusy, locks, unreadableRecord, load,
  };
}
