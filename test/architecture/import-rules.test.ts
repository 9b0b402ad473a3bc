/**
 * The import rules of src/ (issue 26): `tools/import-rules/floors.cjs` places every folder on a floor and
 * `tools/import-rules/runtime-cycles.cjs` forbids runtime cycles; depcruise, run here with both, fails on
 * an upward import, a runtime import cycle or an unplaced folder, naming the files. The fixture
 * tree proves each rule can fail, and that type-only cycles are let be.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIGS = [`${ROOT}tools/import-rules/floors.cjs`, `${ROOT}tools/import-rules/runtime-cycles.cjs`];
const DEPCRUISE = `${ROOT}node_modules/dependency-cruiser/bin/dependency-cruise.mjs`;

interface Violation { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }

async function cruise(cwd: string): Promise<Violation[]> {
  const found: Violation[] = [];
  for (const config of CONFIGS) {
    const result = await run(process.execPath, [DEPCRUISE, 'src', '--config', config, '--output-type', 'json'], { cwd, maxBuffer: 64 << 20 })
      .catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    found.push(...(JSON.parse(result.stdout) as { summary: { violations: Violation[] } }).summary.violations);
  }
  return found;
}

describe('import rules', () => {
  it('src/ has no upward import, no runtime cycle and no unplaced folder', async () => {
    const violations = await cruise(ROOT);
    const lines = violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);
    expect(lines).toEqual([]);
  }, 60_000);

  it('names the files of an upward import, a runtime cycle and an unplaced folder, and lets type-only cycles be', async () => {
    const violations = await cruise(`${ROOT}test/fixtures/import-rules`);
    const found = violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
    expect(found).toEqual([
      'no-runtime-cycle: src/orm/field.ts -> src/orm/model.ts',
      'unplaced-folder: src/stray/loose.ts -> src/errors.ts',
      'upward-from-db: src/db/engine.ts -> src/access/policy.ts',
    ]);
  }, 60_000);
});
