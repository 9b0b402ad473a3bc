/**
 * Import into a model from a CSV or XLSX file (spec §4.8, CONTRACTS C3), as a person does it in
 * Odoo: upload → the server's preview (`import-preview`: headers, first rows, suggested fields)
 * → map each column to a field → `Test` (a dry run: per-row errors, nothing written) → `Import`
 * (a progress bar fed by the socket's `import_progress` frames, else polled, then the result)
 * → `Download failed rows` (the refused records with an `Error` column, to fix and import again).
 *
 * The import route takes the rows as JSON, the preview gives only 20: the browser reads the whole
 * file itself (`spreadsheet-file.js`: CSV, and XLSX through the browser's own inflate), and uses
 * that reading only when it agrees with the server's preview.
 */
import { html } from '../../lib/html.js';
import { useMemo, useRef, useState } from 'preact/hooks';
import { api, saveBlob } from '../api.js';
import { formatNumber } from '../format.js';
import { Dialog } from '../ui/dialog.js';
import { useUniqueId } from '../views/list/unique-id.js';
import { ColumnMapping } from './column-mapping.js';
import { failedRowsBlob } from './failed-rows.js';
import { importTargets, isRelational } from './field-paths.js';
import { ImportResult } from './import-result.js';
import { followImportProgress, newProgressId } from './import-progress.js';
import { agreesWithPreview, readSpreadsheet } from './spreadsheet-file.js';
import { postForm } from './upload-request.js';

/**
 * @typedef {import('./field-paths.js').Registry} Registry
 * @typedef {import('./xlsx-reader.js').Cell} Cell
 * @typedef {import('./import-result.js').ImportAnswer} ImportAnswer
 * @typedef {{headers: string[], rows: unknown[][], suggested_fields: (string | null)[]}} Preview
 */

const DATE_FORMATS = ['YYYY-MM-DD', 'DD/MM/YYYY', 'MM/DD/YYYY', 'DD.MM.YYYY'];

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * @param {{model: string, label: string, registry: Registry, lang: string, onClose: () => void, onImported: () => void}} props
 *   `onImported`: records were written (the list behind reloads).
 */
export function ImportDialog({ model, label, registry, lang, onClose, onImported }) {
  const id = useUniqueId('ff-import');
  const [file, setFile] = useState(/** @type {File | null} */ (null));
  const [hasHeader, setHasHeader] = useState(true);
  const [preview, setPreview] = useState(/** @type {Preview | null} */ (null));
  const [fileRows, setFileRows] = useState(/** @type {Cell[][] | null} */ (null));
  const [mapping, setMapping] = useState(/** @type {string[]} */ ([]));
  const [dateFormat, setDateFormat] = useState(DATE_FORMATS[0]);
  const [createMissing, setCreateMissing] = useState(false);
  const [matchField, setMatchField] = useState('');
  const [atomic, setAtomic] = useState(false);
  const [busy, setBusy] = useState(/** @type {'preview' | 'test' | 'import' | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [result, setResult] = useState(/** @type {{answer: ImportAnswer, data: unknown[][], atomic: boolean} | null} */ (null));
  const [progress, setProgress] = useState(/** @type {{done: number, total: number} | null} */ (null));
  const wrote = useRef(false);

  const targets = useMemo(() => importTargets(registry), [registry]);
  const n = (/** @type {number} */ v) => formatNumber(v, { digits: 0, lang });

  /** @param {File | null} chosen @param {boolean} header */
  const load = async (chosen, header) => {
    setFile(chosen);
    setPreview(null);
    setFileRows(null);
    setResult(null);
    setProgress(null);
    setError(null);
    if (!chosen) return;
    setBusy('preview');
    try {
      const form = new FormData();
      form.append('has_header', header ? 'true' : 'false');
      form.append('file', chosen, chosen.name);
      const [answer, rows] = await Promise.all([
        /** @type {Promise<Preview>} */ (postForm(`/api/import-preview/${encodeURIComponent(model)}`, form)),
        readSpreadsheet(chosen).catch((err) => {
          throw new Error(`This browser cannot read ${chosen.name}: ${messageOf(err)}`);
        }),
      ]);
      if (!agreesWithPreview(rows, answer, header)) {
        throw new Error(`${chosen.name} reads differently here than on the server: save it as UTF-8 CSV or XLSX and upload it again.`);
      }
      setPreview(answer);
      setFileRows(rows);
      setMapping(answer.headers.map((_, i) => answer.suggested_fields?.[i] ?? ''));
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(null);
    }
  };

  const mapped = mapping.map((path, index) => ({ path, index })).filter((m) => m.path);
  const dataRows = fileRows ? (hasHeader ? fileRows.slice(1) : fileRows) : [];
  const duplicates = mapped.some((m, i) => mapped.findIndex((o) => o.path === m.path) !== i);

  /** The rows sent: a header of field paths (row 0), then the file's rows, mapped columns only. */
  const importData = () => [mapped.map((m) => m.path), ...dataRows.map((row) => mapped.map((m) => row[m.index] ?? ''))];

  /** @param {boolean} dryRun */
  const run = async (dryRun) => {
    if (!mapped.length) {
      setError('Choose a field for at least one column.');
      return;
    }
    if (duplicates) {
      setError('Two columns import into the same field: choose another field, or Do not import, for one of them.');
      return;
    }
    setBusy(dryRun ? 'test' : 'import');
    setError(null);
    setResult(null);
    const data = importData();
    const progressId = newProgressId();
    const total = data.slice(1).filter((row) => row[0] !== '' && row[0] !== null && row[0] !== undefined).length;
    /** @type {() => void} */
    let stop = () => {};
    if (!dryRun) {
      setProgress({ done: 0, total });
      stop = followImportProgress(progressId, setProgress);
    }
    try {
      const body = {
        fields: mapped.map((m) => m.path),
        data,
        create_fields: mapped.map((m) => createMissing && createsTarget(registry, m.path)),
        match_fields: matchField ? [matchField] : [],
        date_format: dateFormat,
        dry_run: dryRun,
        atomic,
        ...(dryRun ? {} : { progress_id: progressId }),
      };
      const answer = /** @type {ImportAnswer} */ (await api.post(`/api/import/${encodeURIComponent(model)}`, body));
      stop();
      if (!dryRun) setProgress({ done: answer.summary?.total_records ?? total, total: answer.summary?.total_records ?? total });
      setResult({ answer, data, atomic });
      if (!dryRun && ((answer.summary?.created ?? 0) > 0 || (answer.summary?.updated ?? 0) > 0)) {
        wrote.current = true;
        onImported();
      }
    } catch (err) {
      stop();
      if (!dryRun) setProgress(null);
      setError(messageOf(err));
    } finally {
      setBusy(null);
    }
  };

  const downloadFailed = () => {
    if (!result || !fileRows || !file) return;
    const blob = failedRowsBlob({ fileRows, hasHeader, data: result.data, errors: result.answer.details?.errors ?? [], columnOf });
    saveBlob(blob, `${file.name.replace(/\.(csv|xlsx)$/i, '')} - failed rows.csv`);
  };

  const headerOf = (/** @type {number} */ index) => preview?.headers[index] || `Column ${index + 1}`;
  /** The file's line of a data row (its header, when it has one, is line 1). @param {number} row */
  const lineOf = (row) => (hasHeader ? row + 1 : row);
  /** @param {string | undefined} field */
  const columnOf = (field) => {
    if (!field) return '';
    const found = mapped.find((m) => m.path === field);
    return found ? headerOf(found.index) : field;
  };

  const errorsShown = result ? (result.answer.details?.errors ?? []).length : 0;
  // Once imported, the same rows are not sent twice: a new file (or a changed mapping) starts over.
  const done = Boolean(result && !result.answer.dry_run);
  const footer = html`
    <button type="button" class="ff-button" onClick=${onClose} disabled=${busy === 'import'}>${wrote.current ? 'Close' : 'Cancel'}</button>
    ${errorsShown ? html`<button type="button" class="ff-button" onClick=${downloadFailed}>Download failed rows</button>` : null}
    <button type="button" class="ff-button" onClick=${() => run(true)} disabled=${!preview || busy !== null || done}>${busy === 'test' ? 'Testing…' : 'Test'}</button>
    <button type="button" class="ff-button ff-button-primary" onClick=${() => run(false)} disabled=${!preview || busy !== null || done}>${busy === 'import' ? 'Importing…' : 'Import'}</button>`;

  return html`<${Dialog} title=${`Import ${label}`} onClose=${onClose} footer=${footer} wide busy=${busy === 'import'}>
    <div class="ff-exchange">
      <div class="ff-exchange-options">
        <span class="ff-field">
          <label class="ff-label" for=${`${id}-file`}>File (CSV or XLSX)</label>
          <input id=${`${id}-file`} class="ff-input" type="file" accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            disabled=${busy !== null}
            onChange=${(/** @type {Event} */ e) => load(/** @type {HTMLInputElement} */ (e.currentTarget).files?.[0] ?? null, hasHeader)} />
        </span>
        <label class="ff-exchange-check">
          <input type="checkbox" checked=${hasHeader} disabled=${busy !== null}
            onChange=${(/** @type {Event} */ e) => {
              const on = /** @type {HTMLInputElement} */ (e.currentTarget).checked;
              setHasHeader(on);
              if (file) void load(file, on);
            }} />
          The first row holds the column names
        </label>
      </div>
      ${error ? html`<p class="ff-error-text" role="alert">${error}</p>` : null}
      ${busy === 'preview' ? html`<p role="status">Reading ${file?.name}…</p>` : null}
      ${preview
        ? html`<p class="ff-exchange-scope" role="status">${n(dataRows.length)} ${dataRows.length === 1 ? 'row' : 'rows'} in ${file?.name}. Check the field each column imports into.</p>
          <div class="ff-exchange-scroll">
            <${ColumnMapping} headers=${preview.headers} samples=${preview.rows} targets=${targets} mapping=${mapping} idPrefix=${id}
              onChange=${(/** @type {number} */ index, /** @type {string} */ path) => {
                setMapping(mapping.map((p, i) => (i === index ? path : p)));
                setResult(null);
              }} />
          </div>
          <fieldset class="ff-exchange-settings">
            <legend>Options</legend>
            <span class="ff-field">
              <label class="ff-label" for=${`${id}-date`}>Date format</label>
              <select id=${`${id}-date`} class="ff-input" value=${dateFormat} onChange=${(/** @type {Event} */ e) => setDateFormat(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
                ${DATE_FORMATS.map((f) => html`<option key=${f} value=${f}>${f}</option>`)}
              </select>
            </span>
            <span class="ff-field">
              <label class="ff-label" for=${`${id}-match`}>Update existing records matched by</label>
              <select id=${`${id}-match`} class="ff-input" value=${matchField} onChange=${(/** @type {Event} */ e) => setMatchField(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
                <option value="">Nothing (create every record)</option>
                ${mapped.map((m) => html`<option key=${m.path} value=${m.path}>${headerOf(m.index)}</option>`)}
              </select>
            </span>
            <label class="ff-exchange-check">
              <input type="checkbox" checked=${createMissing} onChange=${(/** @type {Event} */ e) => setCreateMissing(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
              Create missing related records (by name)
            </label>
            <label class="ff-exchange-check">
              <input type="checkbox" checked=${atomic} onChange=${(/** @type {Event} */ e) => setAtomic(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
              Import nothing if any row has an error
            </label>
          </fieldset>`
        : null}
      ${progress
        ? html`<div class="ff-exchange-progress">
            <label class="ff-label" for=${`${id}-progress`}>Import progress</label>
            <progress id=${`${id}-progress`} max=${Math.max(progress.total, 1)} value=${progress.done}></progress>
            <span aria-hidden="true">${n(progress.done)} / ${n(progress.total)}</span>
          </div>`
        : null}
      ${result ? html`<${ImportResult} answer=${result.answer} rows=${rowsOf(result.data)} lineOf=${lineOf} columnOf=${columnOf} lang=${lang} atomic=${result.atomic} />` : null}
    </div>
  <//>`;
}

/**
 * The input rows of an import's `data`: its data rows with a cell that is not blank (the server
 * skips wholly blank rows, so they are no row of the answer).
 * @param {unknown[][]} data
 */
function rowsOf(data) {
  return data.slice(1).filter((row) => row.some((c) => c !== null && c !== undefined && String(c).trim() !== '')).length;
}

/**
 * Whether "create missing related records" applies to a column: a relation named by its target's
 * name (never by an identifier or an id, which name a record that must exist).
 * @param {Registry} registry @param {string} path
 */
function createsTarget(registry, path) {
  const [head, rest] = path.split('/');
  const entry = registry[head];
  if (!entry || !isRelational(entry) || entry.type === 'OneToMany') return false;
  return !rest || !['identifier', 'id', 'ID'].includes(rest);
}
