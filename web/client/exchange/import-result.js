/**
 * What an import or its test run answered (spec §4.8, CONTRACTS C3): what became of the rows, in
 * rows and records, and every row error with the file's line, the column and the reason. Rows are
 * the file's own line numbers (its header is line 1), so a person finds them in the spreadsheet.
 * The rows' own errors are listed first, then the rows held back because of them (a record's other
 * rows, every row of an all-or-nothing import), so a real error is never pushed out of sight.
 * The headline takes the focus when it appears (the button pressed may be disabled by then), so
 * keyboard users continue from it.
 */
import { html } from '../../lib/html.js';
import { useEffect, useRef } from 'preact/hooks';
import { formatNumber } from '../format.js';

/**
 * @typedef {{row: number, field?: string, message: string, held_back?: boolean}} RowError
 * @typedef {{message?: string, success: boolean, valid?: boolean, dry_run?: boolean,
 *   summary: {total_records: number, created: number, updated: number, errors: number, would_create?: number, would_update?: number},
 *   details: {creates: {row: number, id?: number}[], updates: {row: number, id?: number}[], errors: RowError[]}}} ImportAnswer
 */

/** Errors listed at most; the failed-rows file holds them all. */
const SHOWN_ERRORS = 200;

/**
 * @param {{answer: ImportAnswer, rows: number, lineOf: (row: number) => number, columnOf: (field: string | undefined) => string, lang: string, atomic: boolean}} props
 *   `rows`: the non-blank data rows sent.
 */
export function ImportResult({ answer, rows, lineOf, columnOf, lang, atomic }) {
  const n = (/** @type {number | undefined} */ v) => formatNumber(v ?? 0, { digits: 0, lang });
  /** A count and its noun. @param {number | undefined} v @param {string} one @param {string} many */
  const count = (v, one, many) => `${n(v)} ${v === 1 ? one : many}`;
  const s = answer.summary;
  const all = answer.details?.errors ?? [];
  const own = all.filter((e) => !e.held_back);
  const held = all.filter((e) => e.held_back);
  const errors = [...own, ...held];
  const dry = Boolean(answer.dry_run);
  const read = `${count(rows, 'row', 'rows')} (${count(s.total_records, 'record', 'records')})`;
  const ownErrors = count(own.length, 'error', 'errors');
  const notImported = count(new Set(all.map((e) => e.row)).size, 'row', 'rows');
  const heldWith = held.length ? ` (${n(held.length)} of them held back with ${held.length === 1 ? 'its record' : 'their records'})` : '';
  const othersHeld = held.length ? `; the other ${count(held.length, 'row', 'rows')} ${dry ? 'would be' : 'were'} held back` : '';
  const failedRows = count(new Set(own.map((e) => e.row)).size, 'row', 'rows');
  const nothingKept = atomic && all.length > 0;
  const headline = dry
    ? answer.valid
      ? `Test passed: ${read} ready — ${n(s.would_create)} to create, ${n(s.would_update)} to update.`
      : nothingKept
        ? `Test found ${ownErrors} in ${read}: nothing would be imported (all or nothing)${othersHeld}. Nothing was imported.`
        : `Test found ${ownErrors} in ${read}: ${n(s.would_create)} would be created, ${n(s.would_update)} updated, ${notImported} would not be imported${heldWith}. Nothing was imported.`
    : answer.success
      ? `Imported ${read}: ${n(s.created)} created, ${n(s.updated)} updated.`
      : nothingKept
        ? `Nothing was imported: ${ownErrors} in ${failedRows} (all or nothing)${othersHeld}.`
        : `${n(s.created)} created, ${n(s.updated)} updated; ${notImported} not imported because of ${ownErrors}${heldWith}: fix them in the failed-rows file and import it again.`;
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
