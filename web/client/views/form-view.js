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
 * Live updates (spec §6.3): a saved record is watched while the form shows it; a `record_changed`
 * ping (or a `reload` client action) offers a reload in a non-modal prompt — `Reload` on a clean
 * form, `Save & reload` / `Discard & reload` with unsaved edits, which are never dropped without
 * that explicit choice.
 */
import { html } from '../../lib/html.js';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, api, filenameOf, readAction, saveBlob } from '../api.js';
import { linkName } from '../format.js';
import { modelRights } from '../fields/model-rights.js';
import { setLeaveGuard } from '../leave-guard.js';
import { confirmDialog } from '../ui/dialog.js';
import { WizardDialog } from '../wizard/wizard-dialog.js';
import { checkValues } from './form/check-values.js';
import { defaultFormArch } from './form/default-form-arch.js';
import { FormField } from './form/form-field.js';
import { FormLayout, archFields } from './form/form-layout.js';
import { formPaths } from './form/form-paths.js';
import { FormToolbar } from './form/form-toolbar.js';
import { defaultLineColumns } from './form/line-columns.js';
import { LinesTable } from './form/lines-table.js';
import { changedNames, formLine, mergeEffect, writeBody } from './form/record-values.js';
import { refusedField } from './form/refused-field.js';
import { notify } from '../fields/notify.js';
import { useReloadAction } from '../realtime/live.js';
import { followRecord } from '../realtime/record-watch.js';
import { RecordChangedPrompt } from './form/record-changed-prompt.js';
import { NO_LOCKS, heldLocks } from './form/state-locks.js';

/**
 * @typedef {import('../fields/field-props.js').FieldInfo} FieldInfo
 * @typedef {import('./form/record-values.js').FormLine} FormLine
 * @typedef {{
 *   fields: Record<string, FieldInfo>,
 *   arch: import('./form/form-layout.js').ArchNode[],
 *   names: string[],
 *   properties: Record<string, Record<string, any>>,
 *   lineFields: Record<string, Record<string, FieldInfo>>,
 *   lineColumns: Record<string, string[]>,
 *   lineEffects: Record<string, string[]>,
 *   paths: string[],
 * }} FormShape
 */

const EFFECT_DELAY_MS = 120;

/** Registry entries with their names. @param {Record<string, any>} registry @returns {Record<string, FieldInfo>} */
function named(registry) {
  return Object.fromEntries(Object.entries(registry ?? {}).map(([name, f]) => [name, { ...f, name }]));
}

/**
 * What the form shows and reads, from the arch and the registries of its lines.
 * @param {Record<string, FieldInfo>} fields @param {any[]} arch
 * @returns {Promise<FormShape>}
 */
async function formShape(fields, arch) {
  const shown = archFields(arch).filter((f) => fields[f.name] && fields[f.name].visible_setting_holds !== false);
  const names = [...new Set(shown.map((f) => f.name))];
  const properties = Object.fromEntries(shown.map((f) => [f.name, f.properties]));
  /** @type {Record<string, Record<string, FieldInfo>>} */
  const lineFields = {};
  /** @type {Record<string, string[]>} */
  const lineColumns = {};
  /** @type {Record<string, string[]>} */
  const lineEffects = {};
  await Promise.all(names.filter((n) => fields[n].type === 'OneToMany' && fields[n].related_model).map(async (name) => {
    const model = /** @type {string} */ (fields[name].related_model);
    const [registry, info] = await Promise.all([api.registry(model), modelRights(model)]);
    lineFields[model] = named(registry);
    lineColumns[name] = defaultLineColumns(lineFields[model], fields[name].related_name);
    lineEffects[name] = /** @type {any} */ (info)?.effect_fields ?? [];
  }));
  return { fields, arch, names, properties, lineFields, lineColumns, lineEffects, paths: formPaths(fields, names, lineFields, lineColumns) };
}

/** A read record as the form holds it (lines become `FormLine`s). @param {FormShape} shape @param {Record<string, any>} row */
function formValues(shape, row) {
  /** @type {Record<string, any>} */
  const values = { ...row };
  for (const name of shape.names) {
    if (shape.fields[name].type === 'OneToMany') values[name] = (Array.isArray(row[name]) ? row[name] : []).map((line) => formLine(line, true));
  }
  return values;
}

/** Default values of a new record the registry states (the server adds computed ones through ui-effect). @param {FormShape} shape */
function registryDefaults(shape) {
  /** @type {Record<string, any>} */
  const values = {};
  for (const name of shape.names) {
    const field = shape.fields[name];
    if (field.type === 'OneToMany') values[name] = [];
    else if (field.default !== undefined && (typeof field.default !== 'object' || field.default === null)) values[name] = field.default;
  }
  return values;
}

/**
 * A Monetary's currency read with its symbol, for links an effect answered by name only.
 * @param {FormShape} shape @param {Record<string, any>} values
 */
async function withCurrencies(shape, values) {
  const next = { ...values };
  for (const name of shape.names) {
    const field = shape.fields[name];
    const link = field.type === 'Monetary' && field.currency_field ? next[field.currency_field] : null;
    if (!link || typeof link !== 'object' || link.symbol !== undefined || typeof link.id !== 'number') continue;
    try {
      const row = /** @type {Record<string, any>} */ (await api.fetchRecord('Currency', link.id, { fields: ['symbol', 'position', 'rounding', 'name'] }));
      next[/** @type {string} */ (field.currency_field)] = { ...link, ...row };
    } catch {
      // amounts stay without a symbol
    }
  }
  return next;
}

/** @param {unknown} err */
const messageOf = (err) => (err instanceof Error ? err.message : String(err));

/**
 * @param {{
 *   action: {identifier: string | null, id: number, name: string, model: string},
 *   views?: {Form?: any[]},
 *   registry: Record<string, any>,
 *   modelInfo: {model: string, label: string, rec_name: string | null, api_methods: string[], record_methods?: string[], wizards: {method: string, title: string}[],
 *     reports: {id: number, identifier: string | null, name: string, format: string}[], effect_fields: string[], create: boolean, write: boolean, unlink: boolean,
 *     archivable?: boolean, state_locks?: import('./form/state-locks.js').StateLock[]},
 *   route: Record<string, string>,
 *   navigate: (params: Record<string, unknown>, options?: {replace?: boolean}) => unknown,
 *   session?: {user?: {lang?: string | null}, lang?: string | null},
 *   dialog?: boolean,
 * }} props
 */
export function FormView({ action, views, registry, modelInfo, route, navigate, session, dialog = false }) {
  const model = action.model;
  const id = route.id && /^\d+$/.test(route.id) ? Number(route.id) : null;
  const lang = session?.lang ?? session?.user?.lang ?? null;
  const fields = useMemo(() => named(registry), [registry]);
  const arch = useMemo(() => (Array.isArray(views?.Form) && views.Form.length ? views.Form : defaultFormArch(fields, modelInfo.rec_name)), [views, fields]);

  const [shape, setShape] = useState(/** @type {FormShape | null} */ (null));
  const [saved, setSaved] = useState(/** @type {Record<string, any> | null} */ (null));
  const [values, setValues] = useState(/** @type {Record<string, any>} */ ({}));
  const [problems, setProblems] = useState(/** @type {Record<string, string>} */ ({}));
  const [failure, setFailure] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(true);
  const [wizard, setWizard] = useState(/** @type {string | null} */ (null));
  // Typed text a widget cannot read as a value (`31/02/2026`), by field: shown at the field, it
  // blocks Save; Discard and a reload draw the widgets afresh (`revision`) to drop it.
  const [unreadable, setUnreadable] = useState(/** @type {Record<string, string>} */ ({}));
  const unreadableRef = useRef(unreadable);
  const [revision, setRevision] = useState(0);
  // The record changed on the server since it was read (a `record_changed` ping): who and which fields.
  const [change, setChange] = useState(/** @type {import('./form/record-changed-prompt.js').RecordChange | null} */ (null));
  // What the record's state locks (a confirmed order's lines), read with the record.
  const [locks, setLocks] = useState(NO_LOCKS);
  // The record could not be read (it does not exist, or not for this user): nothing to save,
  // delete or run; the form offers only the way back to the list.
  const [unreadableRecord, setUnreadableRecord] = useState(false);
  const changeSeq = useRef(0);

  const savedRef = useRef(saved);
  savedRef.current = saved;
  const valuesRef = useRef(values);
  valuesRef.current = values;
  const dirtyRef = useRef(false);
  const effectSeq = useRef(0);
  const loadSeq = useRef(0);
  const effectTimer = useRef(/** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined));
  const rootRef = useRef(/** @type {HTMLElement | null} */ (null));

  const base = saved ?? {};
  const writable = shape ? shape.names.filter((n) => !shape.fields[n].readonly && !locks.fields.has(n)) : [];
  const changed = shape && saved ? changedNames(shape.fields, writable, values, saved, shape.lineFields) : [];
  const dirty = changed.length > 0 || Object.keys(unreadable).length > 0;
  dirtyRef.current = dirty;

  /** @param {string} name @param {string | null} message */
  const noteUnreadable = (name, message) => {
    const current = unreadableRef.current;
    if ((current[name] ?? null) === message) return;
    const next = { ...current };
    if (message) next[name] = message;
    else delete next[name];
    unreadableRef.current = next;
    setUnreadable(next);
  };

  const forgetUnreadable = () => {
    if (!Object.keys(unreadableRef.current).length) return;
    unreadableRef.current = {};
    setUnreadable({});
    setRevision((r) => r + 1);
  };

  // The shell asks before leaving while there are unsaved edits.
  useEffect(() => {
    setLeaveGuard(() => dirtyRef.current);
    return () => setLeaveGuard(null);
  }, []);

  /** Reads the record (or a new one's defaults) into the form. @param {FormShape} s */
  const load = async (s) => {
    const seq = ++loadSeq.current;
    // A change announced before this read is in what it reads; one announced during it may not be.
    const seenChange = changeSeq.current;
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
        setChange((c) => (c && c.seq <= seenChange ? null : c));
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
    return () => { live = false; clearTimeout(effectTimer.current); };
  }, [fields, arch, id]);

  // Watch the saved record while it is shown (not a new one, not in a dialog); a ping adds up with
  // the ones before it until the person answers.
  useEffect(() => {
    setChange(null);
    if (id === null || dialog) return undefined;
    return followRecord(model, id, (ping) => {
      const seq = ++changeSeq.current;
      const by = ping.updated_by?.display_name ?? null;
      const names = Array.isArray(ping.fields) ? ping.fields.filter((f) => typeof f === 'string') : [];
      setChange((c) => ({ by: by ?? c?.by ?? null, fields: [...new Set([...(c?.fields ?? []), ...names])], seq }));
    });
  }, [model, id, dialog]);

  // The server asked every view to refetch: a clean saved form reads again, one with edits asks.
  useReloadAction(() => {
    if (!shape || id === null) return;
    if (!dirtyRef.current) void load(shape);
    else setChange((c) => ({ by: c?.by ?? null, fields: c?.fields ?? [], seq: ++changeSeq.current }));
  });

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
        const field = refusedField(err, { model, label: modelInfo.label, names: shape.names });
        if (field) setProblems((p) => ({ ...p, [field]: messageOf(err) }));
        else notify.error(messageOf(err));
      }
    }, EFFECT_DELAY_MS);
  };

  /** @param {string} name @param {any} value */
  const setField = (name, value) => {
    setValues((v) => ({ ...v, [name]: value }));
    valuesRef.current = { ...valuesRef.current, [name]: value };
    setProblems((p) => (p[name] ? Object.fromEntries(Object.entries(p).filter(([k]) => k !== name)) : p));
    if (modelInfo.effect_fields.includes(name)) runEffect(name);
  };

  /**
   * Saves (create or update); answers the record's id, or null when nothing could be saved.
   * @param {Record<string, any>} [current] values to save (the statusbar saves the value it just set)
   */
  const save = async (current = valuesRef.current) => {
    if (!shape) return null;
    const found = checkValues(shape.fields, writable, current, shape.lineFields, shape.lineColumns);
    setProblems(found);
    if (Object.keys(found).length || Object.keys(unreadableRef.current).length) {
      setFailure('Some fields need attention before saving.');
      requestAnimationFrame(() => /** @type {HTMLElement | null | undefined} */ (rootRef.current?.querySelector('[aria-invalid="true"]'))?.focus());
      return null;
    }
    setBusy(true);
    setFailure(null);
    clearTimeout(effectTimer.current);
    effectSeq.current++;
    try {
      if (id === null) {
        const body = writeBody(shape.fields, writable, current, null, shape.lineFields);
        const created = /** @type {{id: number}} */ (await api.create(model, body));
        dirtyRef.current = false;
        setSaved({ ...current, id: created.id });
        notify.success('Saved');
        await navigate({ action: route.action, view: 'form', id: created.id }, { replace: true });
        return created.id;
      }
      const body = writeBody(shape.fields, writable, current, base, shape.lineFields);
      if (Object.keys(body).length) await api.update(model, id, body);
      dirtyRef.current = false;
      await load(shape);
      notify.success('Saved');
      return id;
    } catch (err) {
      const field = refusedField(err, { model, label: modelInfo.label, names: shape.names });
      if (field) {
        setProblems({ [field]: messageOf(err) });
        setFailure(null);
        requestAnimationFrame(() => /** @type {HTMLElement | null | undefined} */ (rootRef.current?.querySelector('[aria-invalid="true"]'))?.focus());
      } else {
        setFailure(messageOf(err));
      }
      setBusy(false);
      return null;
    }
  };

  const discard = () => {
    if (id === null) {
      dirtyRef.current = false;
      void navigate({ action: route.action, view: 'list' });
      return;
    }
    setValues(base);
    setProblems({});
    setFailure(null);
    forgetUnreadable();
  };

  const remove = async () => {
    if (id === null) return;
    const name = values.display_name ?? `#${id}`;
    const yes = await confirmDialog({ title: `Delete ${name}?`, message: `The ${modelInfo.label.toLowerCase()} “${name}” will be deleted. This cannot be undone.`, confirm: 'Delete', cancel: 'Cancel', danger: true });
    if (!yes) return;
    setBusy(true);
    try {
      await api.remove(model, id);
      dirtyRef.current = false;
      notify.success(`${name} deleted`);
      await navigate({ action: route.action, view: 'list' });
    } catch (err) {
      setFailure(messageOf(err));
      setBusy(false);
    }
  };

  /** The record's id once it is saved with every pending edit (actions run on the stored record). */
  const savedId = async () => (id !== null && !dirtyRef.current ? id : save());

  /** @param {string} method */
  const runMethod = async (method) => {
    const recordId = await savedId();
    if (recordId === null || recordId !== id) return;
    setBusy(true);
    try {
      const response = await api.execute(model, method, { ids: [recordId], request_body: { inputs: {}, context: { active_ids: [recordId], active_model: model } } });
      const outcome = await readAction(/** @type {Response} */ (response));
      if (outcome.document) saveBlob(outcome.document.blob, outcome.document.filename);
      else notify.success('Done');
    } catch (err) {
      notify.error(messageOf(err));
    }
    if (shape) await load(shape); // a method writes the record (a stage, a rate): show what it stored
    setBusy(false);
  };

  /** @param {{id: number, identifier: string | null, name: string}} report */
  const print = async (report) => {
    const recordId = await savedId();
    if (recordId === null || recordId !== id) return;
    setBusy(true);
    try {
      const response = /** @type {Response} */ (await api.post('/api/generate_report', { model, report_id: report.identifier ?? report.id, instance_ids: [recordId] }, { raw: true }));
      saveBlob(await response.blob(), filenameOf(response.headers.get('content-disposition')));
    } catch (err) {
      notify.error(messageOf(err));
    }
    setBusy(false);
  };

  /** @param {string} method */
  const openWizard = async (method) => {
    const recordId = await savedId();
    if (recordId === null || recordId !== id) return;
    setWizard(method);
  };

  /** @param {KeyboardEvent} e */
  const onKeyDown = (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
      e.preventDefault();
      // A date or number is read when its input loses focus: read the one being typed first.
      const before = valuesRef.current;
      const typing = /** @type {HTMLElement | null} */ (document.activeElement);
      typing?.blur();
      const edited = valuesRef.current !== before || Object.keys(unreadableRef.current).length > 0;
      if (!busy && (dirty || edited || id === null)) void save();
      typing?.focus();
    }
  };

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
  const wizardMethods = new Set(modelInfo.wizards.map((w) => w.method));
  const reportIdentifiers = new Set(modelInfo.reports.map((r) => r.identifier));
  // A method answering a report the Print buttons already offer is not offered twice.
  // Only record methods make sense on a record's buttons (a model-level one takes no ids).
  // Nor a method the record's state refuses (Confirm on a confirmed order).
  const methods = (modelInfo.record_methods ?? modelInfo.api_methods)
    .filter((m) => !wizardMethods.has(m) && !(m === 'action_print' && reportIdentifiers.size) && !locks.methods.has(m));
  const wizards = modelInfo.wizards.filter((w) => !locks.methods.has(w.method));

  /** @param {string} name @param {Record<string, any>} properties */
  const renderField = (name, properties) => {
    if (!shape || !shape.names.includes(name)) return null;
    const field = shape.fields[name];
    const readonly = !canEdit || Boolean(field.readonly) || locks.fields.has(name);
    if (field.type === 'OneToMany') {
      const model = field.related_model ?? '';
      return html`<section class="ff-field ff-field-lines" aria-labelledby=${`lines-${name}`}>
        <h2 class="ff-label" id=${`lines-${name}`}>${field.label ?? name}</h2>
        <${LinesTable} name=${name} label=${field.label ?? name} lines=${values[name] ?? []} registry=${shape.lineFields[model] ?? {}}
          columns=${shape.lineColumns[name] ?? []} readonly=${readonly} lang=${lang} parent=${values} problems=${{ ...unreadable, ...problems }}
          onUnreadable=${noteUnreadable}
          onChange=${(/** @type {FormLine[]} */ lines, /** @type {{line: string, column: string | null}} */ what) => {
            setValues((v) => ({ ...v, [name]: lines }));
            valuesRef.current = { ...valuesRef.current, [name]: lines };
            setProblems((p) => Object.fromEntries(Object.entries(p).filter(([k]) => !k.startsWith(`${name}.${what.line}.`) && k !== name)));
            const matters = what.column === null || (shape.lineEffects[name] ?? []).includes(what.column);
            if (matters && modelInfo.effect_fields.includes(name)) runEffect(name);
          }} />
        ${problems[name] ? html`<p class="ff-error-text" role="alert">${problems[name]}</p>` : null}
      </section>`;
    }
    const statusbar = properties.widget === 'statusbar';
    return html`<${FormField} field=${field} properties=${properties} value=${values[name]} readonly=${readonly}
      problem=${problems[name] ?? unreadable[name]} lang=${lang} record=${values}
      onUnreadable=${(/** @type {string | null} */ message) => noteUnreadable(name, message)}
      onChange=${(/** @type {any} */ value) => {
        setField(name, value);
        // Clicking a stage of a saved record moves it there at once, with any other pending edit.
        if (statusbar && id !== null) void save({ ...valuesRef.current, [name]: value });
      }} />`;
  };

  return html`<article class="ff-form-view" ref=${rootRef} onKeyDown=${onKeyDown} aria-busy=${busy ? 'true' : 'false'}>
    <${FormToolbar} listName=${action.name} recordName=${recordName} dirty=${dirty} busy=${busy} isNew=${id === null}
      canCreate=${modelInfo.create && !unreadableRecord} canWrite=${modelInfo.write && !unreadableRecord} canDelete=${modelInfo.unlink && !unreadableRecord}
      wizards=${id === null || unreadableRecord ? [] : wizards} methods=${id === null || unreadableRecord ? [] : methods}
      reports=${id === null || unreadableRecord ? [] : modelInfo.reports}
      onBack=${() => navigate({ action: route.action, view: 'list' })}
      onNew=${() => navigate({ action: route.action, view: 'form' })}
      onSave=${() => void save()} onDiscard=${discard} onDelete=${() => void remove()}
      onWizard=${(/** @type {string} */ m) => void openWizard(m)} onMethod=${(/** @type {string} */ m) => void runMethod(m)}
      onReport=${(/** @type {any} */ r) => void print(r)} />
    ${change && id !== null && saved
      ? html`<${RecordChangedPrompt} change=${change} dirty=${dirty} busy=${busy} labels=${changedLabels}
          onReload=${reloadClean} onSaveAndReload=${saveAndReload} onDiscardAndReload=${discardAndReload}
          onDismiss=${() => setChange(null)} />`
      : null}
    ${failure ? html`<p class="ff-form-alert" role="alert">${failure}</p>` : null}
    ${unreadableRecord ? html`<p><button type="button" class="ff-button" onClick=${() => navigate({ action: route.action, view: 'list' })}>
        ${`Back to ${action.name}`}</button></p>` : null}
    ${shape && saved ? html`<form class="ff-form" noValidate aria-label=${recordName} onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
        <${FormLayout} key=${revision} arch=${shape.arch} renderField=${renderField} />
      </form>`
      : failure ? null : html`<p class="ff-view-loading" role="status">Loading…</p>`}
    ${wizard && id !== null ? html`<${WizardDialog} model=${model} method=${wizard} activeIds=${[id]} lang=${lang}
      onClose=${() => setWizard(null)}
      onDone=${(/** @type {{reload: boolean}} */ outcome) => { if (outcome.reload && shape) void load(shape); }} />` : null}
  </article>`;
}
