/**
 * A File field (an attachment): the file's name and size, Download (a signed link from
 * `/api/files/{id}/url`, so the browser streams it), Upload / Replace (read in the page and sent
 * with the record as `{name, base64, mimetype}`: nothing is stored before Save) and Clear. The
 * file input carries the field's label.
 */
import { html } from '../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, saveBlob } from '../api.js';
import { controlAttributes } from './control-attributes.js';
import { base64Blob, readUpload, sizeText } from './file-reading.js';
import { notify } from './notify.js';

/** @param {import('./field-props.js').FieldProps} props */
export function FileField(props) {
  const { value, onChange, readonly } = props;
  const picker = useRef(/** @type {HTMLInputElement | null} */ (null));
  const [info, setInfo] = useState(/** @type {{name: string, file_size?: number} | null} */ (null));
  const id = typeof value === 'number' ? value : value && typeof value === 'object' && typeof value.id === 'number' ? value.id : null;
  const pending = value && typeof value === 'object' && typeof value.base64 === 'string' ? value : null;

  useEffect(() => {
    setInfo(null);
    if (id === null) return;
    let live = true;
    api.fetchRecord('Attachment', id, { fields: ['name', 'file_size'] })
      .then((/** @type {any} */ row) => { if (live) setInfo({ name: row.name, file_size: row.file_size }); })
      .catch(() => { if (live) setInfo({ name: `File #${id}` }); });
    return () => { live = false; };
  }, [id]);

  const download = async () => {
    try {
      if (pending) {
        saveBlob(base64Blob(pending.base64, pending.mimetype), pending.name);
        return;
      }
      if (id === null) return;
      const { url } = /** @type {{url: string}} */ (await api.get(`/api/files/${id}/url?action=download`, {}));
      const link = document.createElement('a');
      link.href = url;
      link.download = info?.name ?? '';
      link.hidden = true;
      document.body.append(link);
      link.click();
      link.remove();
    } catch (err) {
      notify.error(err instanceof Error ? err.message : String(err));
    }
  };

  const name = pending ? pending.name : id !== null ? info?.name ?? '…' : '';
  const attrs = controlAttributes(props);
  return html`<div class="ff-file" aria-describedby=${attrs['aria-describedby']}>
    <span class="ff-file-name">${name ? html`${name}${!pending && info?.file_size !== undefined ? html` <small>(${sizeText(info.file_size)})</small>` : null}${pending ? html` <small>(not saved yet)</small>` : null}` : html`<span class="ff-muted">No file</span>`}</span>
    ${name ? html`<button type="button" class="ff-button" onClick=${download} aria-label=${`Download ${name}`}>Download</button>` : null}
    ${readonly ? null : html`
      <input ref=${picker} type="file" class="ff-visually-hidden" ...${attrs}
        onChange=${async (/** @type {Event} */ e) => {
          const input = /** @type {HTMLInputElement} */ (e.currentTarget);
          const file = input.files?.[0];
          if (!file) return;
          try {
            onChange(await readUpload(file));
          } catch (err) {
            notify.error(err instanceof Error ? err.message : String(err));
          }
          input.value = '';
        }} />
      <button type="button" class="ff-button" onClick=${() => picker.current?.click()}>${name ? 'Replace' : 'Upload'}</button>
      ${name ? html`<button type="button" class="ff-button" onClick=${() => onChange(null)}>Clear</button>` : null}`}
  </div>`;
}
