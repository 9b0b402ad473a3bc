/**
 * The dialog of a wizard (CONTRACTS C1 "Wizards"): described by `action-meta` (title, fields,
 * arch, defaults for the selected records), filled like a form, checked (required, max_length)
 * before anything is sent, then run with `execute` on the selection with the values as `inputs`
 * and `{active_ids, active_model}` as context. A refusal naming a field is shown at that field; a
 * returned document is downloaded; `X-Action-Close` closes the dialog and `X-Action-Reload` asks
 * the view behind to reload (`onDone`).
 *
 *   html`<${WizardDialog} model="ProjectTask" method="action_reassign" activeIds=${[7, 9]}
 *          onClose=${close} onDone=${({reload}) => reload && refresh()} />`
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { api, readAction, saveBlob } from '../api.js';
import { Dialog } from '../ui/dialog.js';
import { FormField } from '../views/form/form-field.js';
import { FormLayout, archFields } from '../views/form/form-layout.js';
import { checkValues } from '../views/form/check-values.js';
import { wireValue } from '../views/form/record-values.js';
import { refusedField } from '../views/form/refused-field.js';
import { notify } from '../fields/notify.js';

/**
 * @typedef {import('../fields/field-props.js').FieldInfo} FieldInfo
 * @typedef {{model: string, method: string, title: string, fields: Record<string, FieldInfo>, arch: import('../views/form/form-layout.js').ArchNode[] | null, defaults: Record<string, any>}} WizardMeta
 */

/** Links as the form holds them: a default id gets its name from the target model. @param {Record<string, FieldInfo>} fields @param {Record<string, any>} defaults */
async function namedDefaults(fields, defaults) {
  /** @type {Record<string, any>} */
  const values = { ...defaults };
  await Promise.all(Object.entries(defaults).map(async ([name, value]) => {
    const field = fields[name];
    if (!field?.related_model) return;
    /** @param {number} id */
    const named = async (id) => {
      try {
        const row = /** @type {{id: number, display_name: string}} */ (await api.fetchRecord(field.related_model ?? '', id, { fields: ['display_name'] }));
        return { id, display_name: row.display_name };
      } catch {
        return { id, display_name: `#${id}` };
      }
    };
    if (field.type === 'ManyToOne' && typeof value === 'number') values[name] = await named(value);
    if (field.type === 'ManyToMany' && Array.isArray(value)) values[name] = await Promise.all(value.map((v) => (typeof v === 'number' ? named(v) : v)));
  }));
  return values;
}

/**
 * @param {{
 *   model: string,
 *   method: string,
 *   activeIds?: number[],
 *   selection?: Record<string, unknown>,
 *   lang?: string | null,
 *   onClose: () => void,
 *   onDone?: (outcome: {reload: boolean, result: unknown}) => void,
 * }} props
 */
export function WizardDialog({ model, method, activeIds = [], selection, lang = null, onClose, onDone }) {
  const [meta, setMeta] = useState(/** @type {WizardMeta | null} */ (null));
  const [values, setValues] = useState(/** @type {Record<string, any>} */ ({}));
  const [problems, setProblems] = useState(/** @type {Record<string, string>} */ ({}));
  // Text an input cannot read as a value (a date `31/02/2026`), by field: shown there, it stops the run.
  const [unreadable, setUnreadable] = useState(/** @type {Record<string, string>} */ ({}));
  const [failure, setFailure] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(true);

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const described = /** @type {WizardMeta} */ (await api.actionMeta(model, method, { context: { active_ids: activeIds, active_model: model } }));
        const fields = Object.fromEntries(Object.entries(described.fields).map(([name, f]) => [name, { ...f, name }]));
        const defaults = await namedDefaults(fields, described.defaults ?? {});
        if (!live) return;
        setMeta({ ...described, fields });
        setValues(defaults);
      } catch (err) {
        if (live) setFailure(err instanceof Error ? err.message : String(err));
      } finally {
        if (live) setBusy(false);
      }
    })();
    return () => { live = false; };
  }, [model, method]);

  // The dialog opened before its fields existed: the first one takes the focus once they do.
  useEffect(() => {
    if (!meta) return;
    const form = document.getElementById(`${model}-${method}-wizard`);
    /** @type {HTMLElement | null | undefined} */ (form?.querySelector('input:not([type=hidden]):not([tabindex="-1"]), select, textarea'))?.focus();
  }, [meta]);

  const arch = meta ? meta.arch ?? Object.keys(meta.fields).map((name) => ({ field: { name } })) : [];
  const names = meta ? archFields(arch).map((f) => f.name).filter((n) => meta.fields[n]) : [];

  const run = async () => {
    if (!meta || busy) return;
    const found = { ...checkValues(meta.fields, names, values, {}, {}), ...unreadable };
    setProblems(found);
    if (Object.keys(found).length) {
      setFailure(null);
      return;
    }
    setBusy(true);
    setFailure(null);
    try {
      /** @type {Record<string, unknown>} */
      const inputs = {};
      for (const [name, field] of Object.entries(meta.fields)) {
        if (values[name] !== undefined) inputs[name] = wireValue(field, values[name]);
      }
      const target = selection ? { selection } : { ids: activeIds };
      const response = await api.execute(model, method, { ...target, request_body: { inputs, context: { active_ids: activeIds, active_model: model } } });
      const outcome = await readAction(/** @type {Response} */ (response));
      if (outcome.document) saveBlob(outcome.document.blob, outcome.document.filename);
      if (outcome.close) {
        onDone?.({ reload: outcome.reload, result: outcome.result });
        onClose();
        notify.success(`${meta.title}: done`);
        return;
      }
      onDone?.({ reload: outcome.reload, result: outcome.result });
      notify.success(`${meta.title}: done`);
      setBusy(false);
    } catch (err) {
      const field = refusedField(err, { model, label: meta.title, names });
      const detail = err instanceof Error ? err.message : String(err);
      if (field) setProblems({ [field]: detail });
      else setFailure(detail);
      setBusy(false);
    }
  };

  const footer = html`
    <button type="button" class="ff-button" onClick=${onClose} disabled=${busy && Boolean(meta)}>Cancel</button>
    <button type="submit" form=${`${model}-${method}-wizard`} class="ff-button ff-button-primary" disabled=${busy || !meta}>Confirm</button>`;

  return html`<${Dialog} title=${meta?.title ?? 'Loading…'} onClose=${onClose} footer=${footer} busy=${busy && Boolean(meta)}>
    ${failure ? html`<p class="ff-form-alert" role="alert">${failure}</p>` : null}
    ${meta ? html`<form id=${`${model}-${method}-wizard`} class="ff-wizard-form" noValidate
        onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); void run(); }}>
        <${FormLayout} arch=${arch} renderField=${(/** @type {string} */ name, /** @type {Record<string, any>} */ properties) => {
          const field = meta.fields[name];
          if (!field) return null;
          return html`<${FormField} field=${field} properties=${properties} value=${values[name]} readonly=${false}
            problem=${problems[name] ?? unreadable[name]} lang=${lang} record=${values}
            onUnreadable=${(/** @type {string | null} */ message) => {
              setUnreadable((u) => {
                if ((u[name] ?? null) === message) return u;
                const { [name]: _gone, ...rest } = u;
                return message ? { ...rest, [name]: message } : rest;
              });
              // Readable again: the message a run put there goes with it.
              if (!message) setProblems((p) => { const { [name]: _gone, ...rest } = p; return rest; });
            }}
            onChange=${(/** @type {any} */ value) => {
              setValues((v) => ({ ...v, [name]: value }));
              setProblems((p) => { const { [name]: _gone, ...rest } = p; return rest; });
            }} />`;
        }} />
      </form>`
    : !failure ? html`<p class="ff-muted">Loading…</p>` : null}
  <//>`;
}
