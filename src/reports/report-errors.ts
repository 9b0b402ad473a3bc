/**
 * What report rendering answers when it cannot work. A PDF needs a headless Chromium on the
 * server; without one (none installed, `FF_CHROMIUM` pointing nowhere, a browser that will not
 * start) a `pdf` report is a 503 whose `detail` says how to get one — an operator's fix, not the
 * caller's, so no `Retry-After`. `html` reports never need it.
 */
import { FieldForgeError } from '../errors.js';

export class ReportEngineUnavailable extends FieldForgeError {
  override readonly status = 503;
}
