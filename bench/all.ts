/**
 * `npm run bench`: every benchmark, one after the other, each in its own process — the API bench
 * (`run.ts`: FieldForge vs a bare `node:http` + `pg` server) and then every `bench/*-bench.ts`
 * (bulk writes, form effects, reports…), each printing its figures beside a baseline measured in
 * the same run. Not a test: it prints and never fails CI.
 *
 * `BENCH_ONLY=run,bulk` runs only the named ones (`run` is `run.ts`, `bulk` is `bulk-bench.ts`).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const benches = ['run.ts', ...readdirSync(dir).filter((f) => f.endsWith('-bench.ts')).sort()];
const only = (process.env.BENCH_ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const nameOf = (file: string) => file.replace(/(-bench)?\.ts$/, '');

let failed = 0;
for (const file of benches) {
  if (only.length && !only.includes(nameOf(file))) continue;
  console.log(`\n=== ${nameOf(file)} (bench/${file}) ===\n`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${file}`], { stdio: 'inherit', env: process.env });
  if (run.status !== 0) failed++;
}
if (failed) console.log(`\n${failed} benchmark(s) did not finish (see above).`);
