/**
 * The accessibility attributes every input of a field carries: its id (the `<label for>`), or its
 * own `aria-label` in a table cell, `aria-required`, and `aria-invalid` with the message linked by
 * `aria-describedby` when the field was refused.
 */

/** @param {import('./field-props.js').FieldProps} props */
export function controlAttributes(props) {
  return {
    id: props.id,
    'aria-label': props.ariaLabel,
    'aria-required': props.field.required && !props.readonly ? 'true' : undefined,
    'aria-invalid': props.invalid ? 'true' : undefined,
    'aria-describedby': props.describedBy || undefined,
  };
}
