/**
 * No runtime import cycle anywhere in src/ (issue 26). Read as compiled JavaScript
 * (`tsPreCompilationDeps: false`): type imports, and imports TypeScript elides because only their
 * types are used, are gone, so what is left is exactly what loads at run time. (depcruise's
 * `viaOnly` on the type-aware graph would judge a cycle by one path only and miss runtime ones.)
 */
module.exports = {
  forbidden: [
    {
      name: 'no-runtime-cycle',
      severity: 'error',
      comment: 'A runtime import cycle: these files import each other when the program loads.',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
