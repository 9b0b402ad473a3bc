#!/usr/bin/env node
// The `fieldforge` command. Runs the compiled CLI (dist/, built by `npm install`'s prepare, see
// build.js) when it was built from the sources as they are; otherwise — not built, or a source
// changed since — the TypeScript sources through tsx, so an edited file is never run stale.
import { fileURLToPath } from 'node:url';
import { isFresh } from './build-stamp.js';

if (isFresh(fileURLToPath(new URL('..', import.meta.url)))) {
  await import('../dist/src/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
