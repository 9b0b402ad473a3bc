/**
 * A Monetary amount: edited as a number with its currency's symbol on the side the currency puts
 * it (`$ 12.50`, `12,50 €`), rounded to the currency when shown; read-only amounts are the
 * formatted text (`formatMonetary`).
 */
import { html } from '../../lib/html.js';
import { currencyOf, formatMonetary } from '../format.js';
import { NumberField } from './number-field.js';

/** @param {import('./field-props.js').FieldProps} props */
export function MonetaryField(props) {
  const { field, value, record, lang } = props;
  const currency = currencyOf(field, record);
  const digits = currency?.rounding ? Math.max(0, Math.ceil(-Math.log10(currency.rounding) - 1e-9)) : 2;
  const monetary = { ...field, type: 'Float', precision: digits };
  const display = typeof value === 'number' ? formatMonetary(value, currency, lang) : '';
  const symbol = currency ? currency.symbol || currency.name || '' : '';
  const after = currency?.position === 'After';
  return html`<${NumberField} ...${props} field=${monetary} display=${display}
    prefix=${symbol && !after ? symbol : undefined} suffix=${symbol && after ? symbol : undefined} />`;
}
