/**
 * A Binary field (raw bytes kept in the row, base64 on the wire): its size, Download (built in
 * the page from the value), Upload / Replace and Clear.
 */
import { html } from '../../lib/html.js';
import { useRef } from 'preact/hooks';
import { saveBlob } from '../api.js';
import { controlAttributes } from './control-attributes.js';
import { base64Blob, readUpload, sizeText } from './file-reading.js';

/** @param {import('./field-props.js').FieldProps} props */
export function BinaryField(props) {
  const { field, value, onChange, readonly } = props;
  const picker = useRef(/** @type {HTMLInputElement | null} */ (null));
  const base64 = typeof value === 'string' && value ? value : null;
  const size = base64 ? Math.floor((base64.replace(/=+$/, '').length * 3) / 4) : null;
  const attrs = controlAttributes(props);
  return html`<div class="ff-file" aria-describedby=${attrs['aria-describedby']}>
    <span class="ff-file-name">${base64 ? sizeText(size) : html`<span class="ff-muted">Empty</span>`}</span>
    ${base64 ? html`<button type="button" class="ff-button" onClick=${() => saveBlob(base64Blob(base64), `${field.name}.bin`)}>Download</button>` : null}
    ${readonly ? null : html`
      <input ref=${picker} type="file" class="ff-visually-hidden" ...${attrs}
        onChange=${async (/** @type {Event} */ e) => {
          const input = /** @type {HTMLInputElement} */ (e.currentTarget);
          const file = input.files?.[0];
          if (file) onChange((await readUpload(file)).base64);
          input.value = '';
        }} />
      <button type="button" class="ff-button" onClick=${() => picker.current?.click()}>${base64 ? 'Replace' : 'Upload'}</button>
      ${base64 ? html`<button type="button" class="ff-button" onClick=${() => onChange(null)}>Clear</button>` : null}`}
  </div>`;
}
