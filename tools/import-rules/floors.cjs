/**
 * The import rules of src/ (issue 26), checked by `npm test` (test/architecture/import-rules.test.ts
 * runs depcruise with this file and with `tools/import-rules/runtime-cycles.cjs`). Floors, bottom to top:
 * a file imports only its own folder or a floor below, never one above — type imports included: a
 * type import upward still ties a lower floor to a higher one's design. Folders on one floor may
 * import each other as long as no cycle forms; cycles are the runtime file's rule.
 */
const FLOORS = [
  ['errors.ts', 'lazy-module.ts', 'config'],
  ['db'],
  ['orm'],
  ['access'],
  ['i18n', 'files', 'reports', 'auth'],
  ['modules'],
  ['api'],
  ['realtime'],
  ['platform'],
  ['http'],
  ['cli', 'index.ts'],
];

const pathOf = (entry) => (entry.endsWith('.ts') ? `^src/${entry.replace('.', '\\.')}$` : `^src/${entry}/`);

const upward = FLOORS.flatMap((floor, level) => {
  const higher = FLOORS.slice(level + 1).flat();
  if (!higher.length) return [];
  return floor.map((entry) => ({
    name: `upward-from-${entry.replace('.ts', '')}`,
    severity: 'error',
    comment: `src/${entry} sits on floor ${level} and may not import a higher floor (${higher.join(', ')})`,
    from: { path: pathOf(entry) },
    to: { path: higher.map(pathOf) },
  }));
});

module.exports = {
  forbidden: [
    {
      name: 'unplaced-folder',
      severity: 'error',
      comment: 'A folder or top-level file of src/ that no floor of tools/import-rules/floors.cjs names: place it on one.',
      from: { path: '^src/', pathNot: FLOORS.flat().map(pathOf) },
      to: {},
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
