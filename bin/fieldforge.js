#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 --single-threaded-gc
// The `fieldforge` command. The shebang (repeated by `npm start`) keeps V8's young generation at
// 2 × 4 MiB instead of up to 2 × 16, and glibc to 2 malloc arenas instead of one per thread: a
// server's peak memory under load ~40–50 MiB lower, at no CPU cost the ceiling bench can measure.
// And V8 collects garbage on the main thread alone: a worker is one process per core, so helper
// threads only take CPU from the other workers and PostgreSQL (3–5 % less CPU per request on the
// fetch and create, 15 % on the counter; docs/decisions.md, issue 15).
// Runs the compiled CLI (dist/, built by `npm install`'s prepare, see build.js) when it was built
// from the sources as they are; otherwise — not built, or a source changed since — the TypeScript
// sources through tsx, so an edited file is never run stale.
import { fileURLToPath } from 'node:url';
import { isFresh } from './build-stamp.js';

if (isFresh(fileURLToPath(new URL('..', import.meta.url)))) {
  await import('../dist/src/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
