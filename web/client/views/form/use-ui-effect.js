/**
 * What a change implies, asked of the server (`ui-effect`, CONTRACTS C1): shortly after a field
 * with an effect changes, the form's writable values are sent and the answer merged into the
 * form (an order line fills itself in); a later change or a save makes an earlier answer moot. A
 * refusal naming a field is shown there, any other as a toast.
 */
import { useEffect, useRef } from 'preact/hooks';
import { api } from '../../api.js';
import { notify } from '../../fields/notify.js';
import { withCurrencies } from './initial-values.js';
import { mergeEffect, writeBody } from './record-values.js';
import { refusedField } from './refused-field.js';
import { messageOf } from './use-form-record.js';

const EFFECT_DELAY_MS = 120;

/**
 * @param {{
 *   model: string, id: number | null, label: string, shape: import('./form-shape.js').FormShape | null, writable: string[],
 *   base: Record<string, any>, valuesRef: {current: Record<string, any>},
 *   setValues: (values: Record<string, any>) => void, setProblems: (update: (p: Record<string, string>) => Record<string, string>) => void,
 *   resetOn: unknown[],
 * }} options `resetOn`: what drops a pending question (the form's fields, arch and record)
 */
export function useUiEffect({ model, id, label, shape, writable, base, valuesRef, setValues, setProblems, resetOn }) {
  const effectSeq = useRef(0);
  const effectTimer = useRef(/** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined));

  useEffect(() => () => clearTimeout(effectTimer.current), resetOn);

  /** Asks the server what `fieldName`'s change implies and merges the answer. @param {string} fieldName */
  const runEffect = (fieldName) => {
    if (!shape) return;
    clearTimeout(effectTimer.current);
    const seq = ++effectSeq.current;
    effectTimer.current = setTimeout(async () => {
      const current = valuesRef.current;
      const vals = writeBody(shape.fields, writable, current, id !== null ? base : null, shape.lineFields);
      try {
        const answer = /** @type {Record<string, any>} */ (await api.uiEffect(model, { ...(id !== null ? { id } : {}), vals, field_name: fieldName }));
        if (seq !== effectSeq.current) return;
        const merged = await withCurrencies(shape, mergeEffect(shape.fields, valuesRef.current, answer));
        if (seq !== effectSeq.current) return;
        setValues(merged);
      } catch (err) {
        if (seq !== effectSeq.current) return;
        const field = refusedField(err, { model, label, names: shape.names });
        if (field) setProblems((p) => ({ ...p, [field]: messageOf(err) }));
        else notify.error(messageOf(err));
      }
    }, EFFECT_DELAY_MS);
  };

  /** No answer pending is merged any more (a save sends the values as they are). */
  const cancel = () => {
    clearTimeout(effectTimer.current);
    effectSeq.current++;
  };

  return { runEffect, cancel };
}
