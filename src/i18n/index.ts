/**
 * Languages and translations: locale formats and the helpers rendering with them (`format.ts`),
 * translation files (`translation-files.ts`), loading and lookup (`translations.ts`).
 */
export * from './format.js';
export * from './translation-files.js';
export * from './translations.js';
