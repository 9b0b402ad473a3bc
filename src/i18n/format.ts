/**
 * Locale formats for the server: derived `Language` fields and the helpers that render dates,
 * times, numbers and amounts. They live in `locale-format.js`, one plain ES module the browser
 * loads too (`/web/shared/i18n/locale-format.js`), so a report and a list render a value alike;
 * this module is their TypeScript face.
 */
export {
  PDI, RLI, deriveDatePattern, deriveFormats, deriveTimePattern, formatDate, formatDatetime, formatMonetary, formatNumber,
  formatTime, stripIsolate,
} from './locale-format.js';
export type { CurrencyFormat, DerivedFormats, LanguageFormat } from './locale-format.js';
