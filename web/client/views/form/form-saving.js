/**
 * Saving and discarding a form's edits. `save` checks `required` and `max_length` first (and
 * refuses while a widget holds unreadable text), then creates or updates the record; a refusal
 * naming a field is shown there with the focus on it, another above the form. A new record is
 * opened under its id once created; a saved one is read again. `discard` puts the saved values
 * back (a new record goes back to the list).
 */
import { api } from '../../api.js';
import { notify } from '../../fields/notify.js';
import { checkValues } from './check-values.js';
import { writeBody } from './record-values.js';
import { refusedField } from './refused-field.js';
import { messageOf } from './use-form-record.js';

/**
 * @typedef {object} SavingContext
 * @property {string} model
 * @property {number | null} id
 * @property {{label: string}} modelInfo
 * @property {Record<string, string>} route
 * @property {(params: Record<string, unknown>, options?: {replace?: boolean}) => unknown} navigate
 * @property {import('./form-shape.js').FormShape | null} shape
 * @property {string[]} writable
 * @property {Record<string, any>} base the saved values
 * @property {{current: Record<string, any>}} valuesRef
 * @property {{current: boolean}} dirtyRef
 * @property {{current: Record<string, string>}} unreadableRef
 * @property {{current: HTMLElement | null}} rootRef
 * @property {(values: Record<string, any>) => void} setValues
 * @property {(values: Record<string, any>) => void} setSaved
 * @property {(problems: Record<string, string>) => void} setProblems
 * @property {(failure: string | null) => void} setFailure
 * @property {(busy: boolean) => void} setBusy
 * @property {(shape: import('./form-shape.js').FormShape) => Promise<void>} load
 * @property {() => void} cancelEffect
 * @property {() => void} forgetUnreadable
 */

/** @param {SavingContext} ctx */
export function formSaving(ctx) {
  const { model, id, shape, writable, valuesRef, rootRef } = ctx;
  const focusInvalid = () => requestAnimationFrame(() => /** @type {HTMLElement | null | undefined} */ (rootRef.current?.querySelector('[aria-invalid="true"]'))?.focus());

  /**
   * Saves (create or update); answers the record's id, or null when nothing could be saved.
   * @param {Record<string, any>} [current] values to save (the statusbar saves the value it just set)
   * @returns {Promise<number | null>}
   */
  const save = async (current = valuesRef.current) => {
    if (!shape) return null;
    const found = checkValues(shape.fields, writable, current, shape.lineFields, shape.lineColumns);
    ctx.setProblems(found);
    if (Object.keys(found).length || Object.keys(ctx.unreadableRef.current).length) {
      ctx.setFailure('Some fields need attention before saving.');
      focusInvalid();
      return null;
    }
    ctx.setBusy(true);
    ctx.setFailure(null);
    ctx.cancelEffect();
    try {
      if (id === null) {
        const body = writeBody(shape.fields, writable, current, null, shape.lineFields);
        const created = /** @type {{id: number}} */ (await api.create(model, body));
        ctx.dirtyRef.current = false;
        ctx.setSaved({ ...current, id: created.id });
        notify.success('Saved');
        await ctx.navigate({ action: ctx.route.action, view: 'form', id: created.id }, { replace: true });
        return created.id;
      }
      const body = writeBody(shape.fields, writable, current, ctx.base, shape.lineFields);
      if (Object.keys(body).length) await api.update(model, id, body);
      ctx.dirtyRef.current = false;
      await ctx.load(shape);
      notify.success('Saved');
      return id;
    } catch (err) {
      const field = refusedField(err, { model, label: ctx.modelInfo.label, names: shape.names });
      if (field) {
        ctx.setProblems({ [field]: messageOf(err) });
        ctx.setFailure(null);
        focusInvalid();
      } else {
        ctx.setFailure(messageOf(err));
      }
      ctx.setBusy(false);
      return null;
    }
  };

  const discard = () => {
    if (id === null) {
      ctx.dirtyRef.current = false;
      void ctx.navigate({ action: ctx.route.action, view: 'list' });
      return;
    }
    ctx.setValues(ctx.base);
    ctx.setProblems({});
    ctx.setFailure(null);
    ctx.forgetUnreadable();
  };

  return { save, discard };
}
