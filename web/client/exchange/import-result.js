/**
 * What an import or its test run answered (spec §4.8, CONTRACTS C3): the counts, and every row
 * error with the file's line, the column and the reason. Rows are the file's own line numbers
 * (its header is line 1), so a person finds them in the spreadsheet. The headline takes the focus
 * when it appears (the button pressed may be disabled by then), so keyboard users continue from it.
 */
import { html } from '../../lib/html.js';
import { useEffect, useRef } from 'preact/hooks';
import { formatNumber } from '../format.js';

/**
 * @typedef {{row: number, field?: string, message: string}} RowError
 * @typedef {{message?: string, success: boolean, valid?: boolean, dry_run?: boolean,
 *   summary: {total_records: number, created: number, updated: number, errors: number, would_create?: number, would_update?: number},
 *   details: {creates: {row: number, id?: number}[], updates: {row: number, id?: number}[], errors: RowError[]}}} ImportAnswer
 */

/** Errors listed at most; the failed-rows file holds them all. */
const SHOWN_ERRORS = 200;

/**
 * @param {{answer: ImportAnswer, lineOf: (row: number) => number, columnOf: (field: string | undefined) => string, lang: string, atomic: boolean}} props
 */
export function ImportResult({ answer, lineOf, columnOf, lang, atomic }) {
  const n = (/** @type {number | undefined} */ v) => formatNumber(v ?? 0, { digits: 0, lang });
  /** A count and its noun. @param {number | undefined} v @param {string} one @param {string} many */
  const count = (v, one, many) => `${n(v)} ${v === 1 ? one : many}`;
  const s = answer.summary;
  const errors = answer.details?.errors ?? [];
  const dry = Boolean(answer.dry_run);
  const headline = dry
    ? answer.valid
      ? `Test passed: ${count(s.total_records, 'record', 'records')} ready — ${n(s.would_create)} to create, ${n(s.would_update)} to update.`
      : `Test found ${count(s.errors, 'error', 'errors')} in ${count(s.total_records, 'record', 'records')} (${n(s.would_create)} would be created, ${n(s.would_update)} updated). Nothing was imported.`
    : answer.success
      ? `Imported ${count(s.total_records, 'record', 'records')}: ${n(s.created)} created, ${n(s.updated)} updated.`
      : atomic
        ? `Nothing was imported: ${count(s.errors, 'error', 'errors')} (all or nothing).`
        : `${n(s.created)} created, ${n(s.updated)} updated, ${count(s.errors, 'error', 'errors')}: the rows with errors were not imported.`;
  const ok = dry ? answer.valid : answer.success;
  const headlineRef = useRef(/** @type {HTMLParagraphElement | null} */ (null));
  useEffect(() => headlineRef.current?.focus(), [answer]);
  return html`<section class="ff-exchange-result" aria-label=${dry ? 'Test result' : 'Import result'}>
    <p ref=${headlineRef} tabindex="-1" class=${ok ? 'ff-exchange-ok' : 'ff-error-text'} role=${ok ? 'status' : 'alert'}>${headline}</p>
    ${errors.length
      ? html`<div class="ff-exchange-scroll">
          <table class="ff-table ff-exchange-errors">
            <caption class="ff-visually-hidden">Errors by row</caption>
            <thead><tr><th scope="col">Row</th><th scope="col">Column</th><th scope="col">Error</th></tr></thead>
            <tbody>
              ${errors.slice(0, SHOWN_ERRORS).map((e, i) => html`<tr key=${i}>
                <td class="ff-list-number">${lineOf(e.row)}</td>
                <td>${columnOf(e.field)}</td>
                <td>${e.message}</td>
              </tr>`)}
            </tbody>
          </table>
          ${errors.length > SHOWN_ERRORS ? html`<p class="ff-exchange-hint">…and ${n(errors.length - SHOWN_ERRORS)} more, all in the failed-rows file.</p>` : null}
        </div>`
      : null}
  </section>`;
}
