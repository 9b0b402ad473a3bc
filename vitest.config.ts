import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: { fieldforge: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts', 'modules/*/tests/**/*.test.ts'],
    pool: 'forks',
    // Two test files at a time, also on two cores (vitest's default there is one): most of a file's
    // time is spent waiting on PostgreSQL, Chromium and timers, so the suite takes ~8 min, not ~22.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll waits for what a browser or another process does; 1 s (vitest's default) is
    // exceeded on a loaded two-core CI machine, where a form takes longer to open.
    expect: { poll: { timeout: 10_000 } },
    globalSetup: ['test/global-setup.ts'],
  },
});
