/**
 * One field of a form or dialog: its label, its widget, its help and its message. The label
 * names the control (`<label for>`, or `aria-labelledby` for a group such as the statusbar); a
 * message (a check before saving, or the server's refusal) marks the control `aria-invalid` and
 * is linked to it by `aria-describedby`.
 */
import { html } from '../../../lib/html.js';
import { useId } from 'preact/hooks';
import { FieldWidget, fieldWidget } from '../../fields/field-widget.js';

/**
 * @param {{
 *   field: import('../../fields/field-props.js').FieldInfo,
 *   properties: Record<string, any>,
 *   value: any,
 *   onChange: (value: any) => void,
 *   readonly: boolean,
 *   problem?: string | null,
 *   lang: string | null,
 *   record: Record<string, any>,
 *   onUnreadable?: (message: string | null) => void,
 * }} props
 */
export function FormField({ field, properties, value, onChange, readonly, problem, lang, record, onUnreadable }) {
  const id = `field-${useId()}`;
  const labelId = `${id}-label`;
  const messageId = `${id}-message`;
  const helpId = `${id}-help`;
  const { group } = fieldWidget(field, properties, readonly);
  const statusbar = properties.widget === 'statusbar';
  const label = properties.string ?? field.label ?? field.name;
  const help = field.description && !statusbar ? field.description : null;
  const describedBy = [problem ? messageId : null, help ? helpId : null].filter(Boolean).join(' ') || undefined;
  // The asterisk stays outside the label: the field's name is its label, not "Name *".
  const required = field.required && !readonly ? html`<span class="ff-required" aria-hidden="true">*</span>` : null;
  return html`<div class=${`ff-field${statusbar ? ' ff-field-statusbar' : ''}${field.type === 'Boolean' ? ' ff-field-boolean' : ''}${problem ? ' ff-field-invalid' : ''}`}>
    <div class=${`ff-label-line${statusbar ? ' ff-visually-hidden' : ''}`}>
      ${group
        ? html`<span id=${labelId} class="ff-label">${label}</span>`
        : html`<label id=${labelId} class="ff-label" for=${id}>${label}</label>`}
      ${required}
    </div>
    <div class="ff-control">
      <${FieldWidget} id=${id} labelId=${labelId} field=${field} value=${value} onChange=${onChange} readonly=${readonly}
        invalid=${Boolean(problem)} describedBy=${describedBy} lang=${lang} record=${record} properties=${properties}
        onUnreadable=${onUnreadable} />
    </div>
    ${help ? html`<p id=${helpId} class="ff-help">${help}</p>` : null}
    ${problem ? html`<p id=${messageId} class="ff-error-text" role="alert">${problem}</p>` : null}
  </div>`;
}
