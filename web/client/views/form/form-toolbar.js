/**
 * The form's bar: where the record sits (back to the list, its name), the record buttons (`New`,
 * `Save`, `Discard`, `Delete`) and the model's own actions — each wizard by its title, the other
 * API methods by their name, and `Print …` per report.
 */
import { html } from '../../../lib/html.js';

/** `action_update_rate` → `Update rate`. @param {string} method */
export function methodLabel(method) {
  const words = method.replace(/^action_/, '').replace(/_/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : method;
}

/**
 * @param {{
 *   listName: string, recordName: string, dirty: boolean, busy: boolean, isNew: boolean,
 *   canCreate: boolean, canWrite: boolean, canDelete: boolean,
 *   wizards: {method: string, title: string}[], methods: string[], reports: {id: number, identifier: string | null, name: string}[],
 *   onBack: () => void, onNew: () => void, onSave: () => void, onDiscard: () => void, onDelete: () => void,
 *   onWizard: (method: string) => void, onMethod: (method: string) => void, onReport: (report: {id: number, identifier: string | null, name: string}) => void,
 * }} props
 */
export function FormToolbar(props) {
  const { dirty, busy, isNew } = props;
  const editable = isNew ? props.canCreate : props.canWrite;
  return html`<header class="ff-form-bar">
    <nav class="ff-form-trail" aria-label="Breadcrumb">
      <button type="button" class="ff-link-button" onClick=${props.onBack}>${props.listName}</button>
      <span aria-hidden="true"> / </span>
      <h1 class="ff-form-title" aria-current="page">${props.recordName}</h1>
      ${dirty ? html`<span class="ff-badge ff-dirty-badge">Unsaved changes</span>` : null}
    </nav>
    <div class="ff-form-buttons" role="group" aria-label="Record">
      ${editable ? html`<button type="button" class="ff-button ff-button-primary" onClick=${props.onSave} disabled=${busy || (!dirty && !isNew)}
        title="Save (Ctrl+S)">Save</button>` : null}
      ${editable ? html`<button type="button" class="ff-button" onClick=${props.onDiscard} disabled=${busy || !dirty}>Discard</button>` : null}
      ${props.canCreate && !isNew ? html`<button type="button" class="ff-button" onClick=${props.onNew} disabled=${busy}>New</button>` : null}
      ${props.canDelete && !isNew ? html`<button type="button" class="ff-button ff-button-danger" onClick=${props.onDelete} disabled=${busy}>Delete</button>` : null}
    </div>
    ${props.wizards.length || props.methods.length || props.reports.length ? html`
      <div class="ff-form-actions" role="group" aria-label="Actions">
        ${props.methods.map((m) => html`<button type="button" class="ff-button" disabled=${busy} onClick=${() => props.onMethod(m)}>${methodLabel(m)}</button>`)}
        ${props.wizards.map((w) => html`<button type="button" class="ff-button" disabled=${busy} onClick=${() => props.onWizard(w.method)}>${w.title}</button>`)}
        ${props.reports.map((r) => html`<button type="button" class="ff-button" disabled=${busy} onClick=${() => props.onReport(r)}>${`Print ${r.name}`}</button>`)}
      </div>` : null}
  </header>`;
}
