/**
 * Languages and translations: locale formats and the helpers rendering with them (`format.ts`),
 * translation files (`translation-files.ts`), loading, lookup and the caller's language
 * (`translations.ts`), the caller's formats and rendering a list of values (`locale.ts`).
 */
export * from './format.js';
export * from './locale.js';
export * from './translation-files.js';
export * from './translations.js';
