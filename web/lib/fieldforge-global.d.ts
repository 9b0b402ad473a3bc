/**
 * `window.fieldforge` for the type-checker (`npx tsc -p web`): the object the platform script
 * defines. Every page of the client loads the platform script before its own modules, so the
 * property is typed as present.
 */
interface Window {
  readonly fieldforge: typeof import('../platform.js').default;
}
