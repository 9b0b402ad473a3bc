/**
 * The form of one record (CONTRACTS C2 "Form"), drawn from the action's Form arch (or a default
 * one): every field through its widget, lines as an editable table, the statusbar on top. It
 * tracks what changed against the saved record, guards leaving unsaved edits, checks `required`
 * and `max_length` before sending, shows the server's refusal at the field it names, asks
 * `ui-effect` what a change implies (an order line fills itself in), and runs the model's
 * actions: wizards in a dialog, other API methods, and reports downloaded as documents.
 *
 * Props (the shell's contract): `{action, views, registry, modelInfo, route, navigate, session}`;
 * `route.id` is the record (none: a new one); `dialog`: the form is shown in a dialog (window
 * mode), which does not watch its record.
 *
 * A `_mail_thread` model's form (`messaging/mail-thread.js`) shows the chatter of a saved record
 * under the fields (CONTRACTS C5), not in a dialog.
 *
 * Live updates (spec §6.3): a saved record is watched while the form shows it; a `record_changed`
 * ping (or a `reload` client action) offers a reload in a non-modal prompt — `Reload` on a clean
 * form, `Save & reload` / `Discard & reload` with unsaved edits, which are never dropped without
 * that explicit choice.
 */
import { html } from '../../lib/html.js';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { linkName } from '../format.js';
import { setLeaveGuard } from '../leave-guard.js';
import { Chatter } from '../messaging/chatter.js';
import { THREAD_FIELDS, isMailThread } from '../messaging/mail-thread.js';
import { useReloadAction } from '../realtime/live.js';
import { WizardDialog } from '../wizard/wizard-dialog.js';
import { defaultFormArch } from './form/default-form-arch.js';
import { formFieldSlot } from './form/form-field-slot.js';
import { FormLayout } from './form/form-layout.js';
import { named } from './form/form-shape.js';
import { formSaving } from './form/form-saving.js';
import { FormToolbar } from './form/form-toolbar.js';
import { recordActions } from './form/record-actions.js';
import { recordButtons } from './form/record-buttons.js';
import { RecordChangedPrompt } from './form/record-changed-prompt.js';
import { changedNames } from './form/record-values.js';
import { saveShortcut } from './form/save-shortcut.js';
import { useFormRecord } from './form/use-form-record.js';
import { useRecordChanges } from './form/use-record-changes.js';
import { useUiEffect } from './form/use-ui-effect.js';
import { useUnreadableFields } from './form/use-unreadable-fields.js';

/**
 * @param {{
 *   action: {identifier: string | null, id: number, name: string, model: string},
 *   views?: {Form?: any[]},
 *   registry: Record<string, any>,
 *   modelInfo: {model: string, label: string, rec_name: string | null, api_methods: string[], record_methods?: string[], wizards: {method: string, title: string}[],
 *     reports: {id: number, identifier: string | null, name: string, format: string}[], effect_fields: string[], create: boolean, write: boolean, unlink: boolean,
 *     archivable?: boolean, state_locks?: import('./form/state-locks.js').StateLock[], mail_thread?: boolean},
 *   route: Record<string, string>,
 *   navigate: (params: Record<string, unknown>, options?: {replace?: boolean}) => unknown,
 *   session?: {user?: {id?: number, lang?: string | null}, lang?: string | null},
 *   dialog?: boolean,
 * }} props
 */
export function FormView({ action, views, registry, modelInfo, route, navigate, session, dialog = false }) {
  const model = action.model;
  const id = route.id && /^\d+$/.test(route.id) ? Number(route.id) : null;
  const lang = session?.lang ?? session?.user?.lang ?? null;
  const fields = useMemo(() => named(registry), [registry]);
  const arch = useMemo(() => (Array.isArray(views?.Form) && views.Form.length ? views.Form : defaultFormArch(fields, modelInfo.rec_name, isMailThread(modelInfo) ? THREAD_FIELDS : [])), [views, fields]);

  const [wizard, setWizard] = useState(/** @type {string | null} */ (null));
  const unreadable = useUnreadableFields();
  const changes = useRecordChanges(model, id, dialog);
  const record = useFormRecord({ model, id, modelInfo, fields, arch, changes, forgetUnreadable: unreadable.forget });
  const { shape, saved, values, valuesRef, problems, failure, busy, locks, unreadableRecord, load } = record;
  const { change } = changes;
  const dirtyRef = useRef(false);
  const rootRef = useRef(/** @type {HTMLElement | null} */ (null));

  const base = saved ?? {};
  const writable = shape ? shape.names.filter((n) => !shape.fields[n].readonly && !locks.fields.has(n)) : [];
  const changed = shape && saved ? changedNames(shape.fields, writable, values, saved, shape.lineFields) : [];
  const dirty = changed.length > 0 || Object.keys(unreadable.unreadable).length > 0;
  dirtyRef.current = dirty;

  // The shell asks before leaving while there are unsaved edits.
  useEffect(() => {
    setLeaveGuard(() => dirtyRef.current);
    return () => setLeaveGuard(null);
  }, []);

  // The server asked every view to refetch: a clean saved form reads again, one with edits asks.
  useReloadAction(() => {
    if (!shape || id === null) return;
    if (!dirtyRef.current) void load(shape);
    else changes.announce();
  });

  const effect = useUiEffect({
    model, id, label: modelInfo.label, shape, writable, base, valuesRef, setValues: record.setValues, setProblems: record.setProblems, resetOn: [fields, arch, id],
  });

  /** @param {string} name @param {any} value */
  const setField = (name, value) => {
    record.setValues((v) => ({ ...v, [name]: value }));
    valuesRef.current = { ...valuesRef.current, [name]: value };
    record.setProblems((p) => (p[name] ? Object.fromEntries(Object.entries(p).filter(([k]) => k !== name)) : p));
    if (modelInfo.effect_fields.includes(name)) effect.runEffect(name);
  };

  const context = { ...record, model, id, modelInfo, route, navigate, writable, base, dirtyRef, rootRef, unreadableRef: unreadable.unreadableRef };
  const { save, discard } = formSaving({ ...context, cancelEffect: effect.cancel, forgetUnreadable: unreadable.forget });
  const { remove, runMethod, print, openWizard } = recordActions({ ...context, save, setWizard });
  const onKeyDown = saveShortcut({ valuesRef, unreadableRef: unreadable.unreadableRef, busy, pending: dirty || id === null, save });

  /** The prompt's answers. `Reload` only ever reads into a clean form. */
  const reloadClean = () => {
    if (!shape || dirtyRef.current) return;
    void load(shape);
  };
  const discardAndReload = () => {
    if (!shape) return;
    dirtyRef.current = false;
    void load(shape);
  };
  // Saved first (the edits go over the other person's values of the same fields), then read
  // again (save does); a refused save keeps the edits, the prompt and the message.
  const saveAndReload = () => void save();

  const canEdit = id === null ? modelInfo.create : modelInfo.write;
  const changedLabels = change && shape
    ? change.fields.filter((n) => shape.fields[n]).map((n) => shape.fields[n].label ?? n)
    : [];
  const recordName = id === null ? `New ${modelInfo.label}` : linkName(values) || (modelInfo.rec_name ? values[modelInfo.rec_name] : '') || `#${id}`;
  const { methods, wizards } = recordButtons(modelInfo, locks);
  const renderField = formFieldSlot({
    ...record, id, canEdit, lang, unreadable: unreadable.unreadable, effectFields: modelInfo.effect_fields, noteUnreadable: unreadable.note,
    setField, runEffect: effect.runEffect, save,
  });
  const none = id === null || unreadableRecord;

  return html`<article class="ff-form-view" ref=${rootRef} onKeyDown=${onKeyDown} aria-busy=${busy ? 'true' : 'false'}>
    <${FormToolbar} listName=${action.name} recordName=${recordName} dirty=${dirty} busy=${busy} isNew=${id === null}
      canCreate=${modelInfo.create && !unreadableRecord} canWrite=${modelInfo.write && !unreadableRecord} canDelete=${modelInfo.unlink && !unreadableRecord}
      wizards=${none ? [] : wizards} methods=${none ? [] : methods} reports=${none ? [] : modelInfo.reports}
      onBack=${() => navigate({ action: route.action, view: 'list' })}
      onNew=${() => navigate({ action: route.action, view: 'form' })}
      onSave=${() => void save()} onDiscard=${discard} onDelete=${() => void remove()}
      onWizard=${(/** @type {string} */ m) => void openWizard(m)} onMethod=${(/** @type {string} */ m) => void runMethod(m)}
      onReport=${(/** @type {any} */ r) => void print(r)} />
    ${change && id !== null && saved
      ? html`<${RecordChangedPrompt} change=${change} dirty=${dirty} busy=${busy} labels=${changedLabels}
          onReload=${reloadClean} onSaveAndReload=${saveAndReload} onDiscardAndReload=${discardAndReload}
          onDismiss=${() => changes.setChange(null)} />`
      : null}
    ${failure ? html`<p class="ff-form-alert" role="alert">${failure}</p>` : null}
    ${unreadableRecord ? html`<p><button type="button" class="ff-button" onClick=${() => navigate({ action: route.action, view: 'list' })}>
        ${`Back to ${action.name}`}</button></p>` : null}
    ${shape && saved ? html`<form class="ff-form" noValidate aria-label=${recordName} onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
        <${FormLayout} key=${unreadable.revision} arch=${shape.arch} renderField=${renderField} />
      </form>`
      : failure ? null : html`<p class="ff-view-loading" role="status">Loading…</p>`}
    ${isMailThread(modelInfo) && !dialog && !none && saved ? html`<${Chatter} model=${model} id=${id} userId=${session?.user?.id ?? null} lang=${lang} />` : null}
    ${wizard && id !== null ? html`<${WizardDialog} model=${model} method=${wizard} activeIds=${[id]} lang=${lang}
      onClose=${() => setWizard(null)}
      onDone=${(/** @type {{reload: boolean}} */ outcome) => { if (outcome.reload && shape) void load(shape); }} />` : null}
  </article>`;
}
