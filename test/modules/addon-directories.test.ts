/**
 * Module code loads the same wherever its directory lives (issue 10 §11). The real command line
 * installs add-ons from a bare temporary directory (no package.json anywhere above it) and from
 * a directory inside a `"type": "commonjs"` package: Node's rule would make their TypeScript
 * CommonJS there, and `'fieldforge'` would not resolve outside the FieldForge package. Each add-on
 * imports from 'fieldforge', imports a sibling file by its `.js` name, and seeds records from a
 * `.ts` data file; the records read back through the API.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

/** An add-on whose model, helper and data file all go through the module loader. */
function addonFiles(model: string): Record<string, string> {
  return {
    'models/index.ts': `export * from './${model.toLowerCase()}.js';\n`,
    [`models/${model.toLowerCase()}.ts`]: `
import { Model, fields } from 'fieldforge';
import { shout } from './shout.js';

export class ${model} extends Model {
  static override fields = {
    name: fields.Char({ required: true }),
    loud: fields.Char({ calculate: 'calc_loud', depends: ['name'], store: true }),
  };
  declare name: string;
  calc_loud(): string {
    return shout(this.name);
  }
}
`,
    'models/shout.ts': `export const shout = (text: string): string => text.toUpperCase() + '!';\n`,
    'data/records.ts': `
const records: () => Record<string, unknown>[] = () => [
  { data_type: '${model}', identifier: 'first', name: 'from a ts data file' },
];
export default records;
`,
    'security/access.yaml': adminAccessYaml([model]),
  };
}

let t: TestDatabase;
let bareRoot: string;
let packageDir: string;

beforeAll(async () => {
  bareRoot = await mkdtemp(join(tmpdir(), 'ff-bare-addons-'));
  packageDir = await mkdtemp(join(tmpdir(), 'ff-cjs-package-'));
  await writeFile(join(packageDir, 'package.json'), JSON.stringify({ name: 'someone-elses-tools', type: 'commonjs' }));
  await writeProbeModule(bareRoot, 'bare_probe', addonFiles('BareProbe'));
  await writeProbeModule(join(packageDir, 'addons'), 'cjs_probe', addonFiles('CjsProbe'));
  t = await testDatabase('core', [bareRoot, join(packageDir, 'addons')]);
});
afterAll(async () => {
  await t?.close();
  for (const dir of [bareRoot, packageDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('add-ons outside the FieldForge package', () => {
  it('install from the command line, from a bare directory and from a CommonJS package', async () => {
    const run = await runCli(['-db', t.name, '--init', 'bare_probe,cjs_probe'], { FF_ADDONS_PATH: `${bareRoot}:${join(packageDir, 'addons')}` });
    expect(run.stderr).not.toContain('Cannot require() ES Module');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('installed [bare_probe, cjs_probe]');
    for (const model of ['BareProbe', 'CjsProbe']) {
      const res = await t.api('POST', `/api/query/${model}`, { fields: ['name', 'loud', 'identifier'] });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual([
        { id: expect.any(Number), display_name: 'from a ts data file', name: 'from a ts data file', loud: 'FROM A TS DATA FILE!', identifier: expect.stringMatching(/_probe\.first$/) },
      ]);
    }
  });
});
