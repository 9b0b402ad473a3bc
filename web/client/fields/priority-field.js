/**
 * `widget: priority`: a Selection of increasing importance (`0` Normal, `1` Important, `2`
 * Urgent) as stars. It is a radio group named by the field's label; each star is a radio named by
 * its choice ("Urgent"), arrows move between them, and choosing the checked star again goes back
 * to the first choice (no priority), as in Odoo.
 */
import { html } from '../../lib/html.js';

/** @param {import('./field-props.js').FieldProps} props */
export function PriorityField(props) {
  const { field, value, onChange, readonly, labelId, ariaLabel } = props;
  const choices = field.choices ?? [];
  const [first, ...levels] = choices;
  const current = Math.max(0, choices.findIndex(([key]) => key === value));

  /** @param {KeyboardEvent} e @param {number} index */
  const onKeyDown = (e, index) => {
    const step = e.key === 'ArrowRight' || e.key === 'ArrowUp' ? 1 : e.key === 'ArrowLeft' || e.key === 'ArrowDown' ? -1 : 0;
    if (!step || readonly) return;
    e.preventDefault();
    const next = Math.min(choices.length - 1, Math.max(0, index + step));
    onChange(choices[next][0]);
    const group = /** @type {HTMLElement} */ (e.currentTarget).parentElement;
    requestAnimationFrame(() => /** @type {HTMLElement | null | undefined} */ (group?.children[Math.max(0, next - 1)])?.focus());
  };

  return html`<div class="ff-priority" role="radiogroup" id=${props.id} aria-labelledby=${ariaLabel ? undefined : labelId} aria-label=${ariaLabel}
    aria-describedby=${props.describedBy || undefined} aria-readonly=${readonly ? 'true' : undefined}>
    ${levels.map(([key, label], i) => {
      const index = i + 1;
      const lit = index <= current;
      return html`<button type="button" role="radio" class=${`ff-star${lit ? ' ff-star-on' : ''}`} aria-checked=${index === current ? 'true' : 'false'}
        aria-label=${label} title=${label} disabled=${readonly} tabIndex=${index === Math.max(current, 1) ? 0 : -1}
        onClick=${() => onChange(index === current && first ? first[0] : key)}
        onKeyDown=${(/** @type {KeyboardEvent} */ e) => onKeyDown(e, index)}>${lit ? '★' : '☆'}</button>`;
    })}
  </div>`;
}
