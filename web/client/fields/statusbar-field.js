/**
 * `widget: statusbar`: the pipeline a record moves through (a ManyToOne to stages, or a
 * Selection), as a row of buttons in order with the current step marked (`aria-current="step"`).
 * Folded stages are left out unless the record is in one. Clicking a step moves the record there;
 * the form saves a saved record at once (Odoo's behaviour).
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';

/** @type {Map<string, Promise<{id: number, display_name: string, fold?: boolean}[]>>} */
const stagesByModel = new Map();

/** The steps of a stage model, in its order (read once per page). @param {string} model */
function stagesOf(model) {
  let pending = stagesByModel.get(model);
  if (!pending) {
    const read = (/** @type {string[]} */ fields) => api.query(model, { fields, limit: 50 });
    pending = read(['display_name', 'fold']).catch(() => read(['display_name']));
    pending.catch(() => stagesByModel.delete(model));
    stagesByModel.set(model, pending);
  }
  return pending;
}

/** @param {import('./field-props.js').FieldProps} props */
export function StatusbarField(props) {
  const { field, value, onChange, readonly, labelId } = props;
  const [stages, setStages] = useState(/** @type {{key: any, label: string, fold?: boolean}[]} */ ([]));

  useEffect(() => {
    if (field.type === 'Selection') {
      setStages((field.choices ?? []).map(([key, label]) => ({ key, label })));
      return;
    }
    if (!field.related_model) return;
    let live = true;
    stagesOf(field.related_model)
      .then((rows) => { if (live) setStages(rows.map((r) => ({ key: r.id, label: r.display_name, fold: r.fold }))); })
      .catch(() => undefined);
    return () => { live = false; };
  }, [field.related_model]);

  const currentKey = value && typeof value === 'object' ? value.id : value;
  const shown = stages.filter((s) => !s.fold || s.key === currentKey);
  return html`<div class="ff-statusbar" role="group" id=${props.id} aria-labelledby=${labelId} aria-describedby=${props.describedBy || undefined}>
    ${shown.map((s) => {
      const current = s.key === currentKey;
      return html`<button type="button" class=${`ff-statusbar-step${current ? ' ff-statusbar-current' : ''}`}
        aria-current=${current ? 'step' : undefined} disabled=${readonly && !current} aria-disabled=${readonly ? 'true' : undefined}
        onClick=${() => {
          if (readonly || current) return;
          onChange(field.type === 'Selection' ? s.key : { id: s.key, display_name: s.label });
        }}>${s.label}</button>`;
    })}
  </div>`;
}
