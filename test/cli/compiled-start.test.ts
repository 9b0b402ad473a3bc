/**
 * Starting without a TypeScript loader (issue 15): `bin/build.js` (npm's prepare) compiles src/
 * and modules/ into dist/ and stamps it; `bin/fieldforge.js` runs dist/ while the stamp is newer
 * than every source, and the TypeScript sources (through tsx) as soon as one is newer, added or
 * removed, or dist/ is missing — an edited file is never run stale. Both scripts run here, as they
 * are, in a package of the test's own (copies of them, a two-file platform, a module), so the
 * repository's own dist/ is neither needed nor touched.
 */
import { execFile } from 'node:child_process';
import { copyFile, lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let pkg: string;

/** The platform's CLI says where it runs from; a module's code imports the platform as `fieldforge`. */
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'fieldforge', version: '0.0.0', type: 'module' }),
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true, noEmit: true, skipLibCheck: true,
      verbatimModuleSyntax: true, types: [], paths: { fieldforge: ['./src/index.ts'] },
    },
  }),
  'src/index.ts': `export const where: string = import.meta.url.includes('/dist/') ? 'compiled' : 'sources';\n`,
  'src/cli/main.ts': `import { where } from '../index.js';\nconst plugin: { where: string } = await import('../../modules/probe/models/index.js');\nconsole.log(\`cli from \${where}, module sees \${plugin.where}\`);\n`,
  'modules/probe/manifest.yaml': 'name: Probe\nidentifier: probe\n',
  'modules/probe/models/index.ts': `import { where } from 'fieldforge';\nexport { where };\n`,
};

async function cli(): Promise<string> {
  const { stdout } = await run(process.execPath, [join(pkg, 'bin', 'fieldforge.js')], { cwd: pkg });
  return stdout.trim();
}

/** Every file of the package dated `seconds` ago, dist/ included (the build is then up to date). */
async function ageEverything(seconds: number): Promise<void> {
  const then = new Date(Date.now() - seconds * 1000);
  for (const path of ['src', 'src/cli', 'modules', 'modules/probe', 'modules/probe/models', ...Object.keys(FILES), 'bin/build.js', 'tsconfig.build.json']) {
    await utimes(join(pkg, path), then, then);
  }
}

beforeAll(async () => {
  pkg = await mkdtemp(join(tmpdir(), 'ff-compiled-start-'));
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(join(pkg, path, '..'), { recursive: true });
    await writeFile(join(pkg, path), text);
  }
  await mkdir(join(pkg, 'bin'));
  await mkdir(join(pkg, 'web'));
  for (const file of ['bin/fieldforge.js', 'bin/build.js', 'bin/build-stamp.js', 'tsconfig.build.json']) await copyFile(join(ROOT, file), join(pkg, file));
  // The scripts find typescript and tsx as installed packages.
  await symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  await ageEverything(60);
});
afterAll(async () => {
  if (pkg) await rm(pkg, { recursive: true, force: true });
});

describe('fieldforge without a build', () => {
  it('runs the TypeScript sources', async () => {
    expect(await cli()).toBe('cli from sources, module sees sources');
  });
});

describe('bin/build.js', () => {
  it('compiles src/ and modules/ into dist/, links the other files and makes `fieldforge` relative', async () => {
    const { stdout } = await run(process.execPath, [join(pkg, 'bin', 'build.js')], { cwd: pkg });
    expect(stdout).toMatch(/compiled 3 files into dist\//);
    const moduleCode = await readFile(join(pkg, 'dist/modules/probe/models/index.js'), 'utf8');
    expect(moduleCode).toContain('from "../../../src/index.js"');
    expect(moduleCode).not.toContain('fieldforge');
    expect((await lstat(join(pkg, 'dist/modules/probe/manifest.yaml'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(pkg, 'dist/modules/probe/manifest.yaml'))).toBe('../../../modules/probe/manifest.yaml');
    expect(await readlink(join(pkg, 'dist/web'))).toBe('../web');
    expect(await readlink(join(pkg, 'dist/package.json'))).toBe('../package.json');
  }, 60_000);
});

describe('fieldforge with a build', () => {
  it('runs dist/ while it is up to date, one platform for the CLI and the module', async () => {
    expect(await cli()).toBe('cli from compiled, module sees compiled');
  });

  it('runs the sources once a source file is newer than the build', async () => {
    await utimes(join(pkg, 'src/index.ts'), new Date(), new Date());
    expect(await cli()).toBe('cli from sources, module sees sources');
    await ageEverything(60);
    expect(await cli()).toBe('cli from compiled, module sees compiled');
    await utimes(join(pkg, 'modules/probe/models/index.ts'), new Date(), new Date());
    expect(await cli()).toBe('cli from sources, module sees sources');
  });

  it('runs the sources once a file is added to a source directory, or the build configuration changed', async () => {
    await ageEverything(60);
    await writeFile(join(pkg, 'modules/probe/models/extra.ts'), 'export {};\n');
    expect(await cli()).toBe('cli from sources, module sees sources');
    await rm(join(pkg, 'modules/probe/models/extra.ts'));
    await ageEverything(60);
    expect(await cli()).toBe('cli from compiled, module sees compiled');
    await utimes(join(pkg, 'tsconfig.build.json'), new Date(), new Date());
    expect(await cli()).toBe('cli from sources, module sees sources');
  });

  it('runs the sources when dist/ is gone', async () => {
    await ageEverything(60);
    expect(await cli()).toBe('cli from compiled, module sees compiled');
    await rm(join(pkg, 'dist'), { recursive: true });
    expect(await cli()).toBe('cli from sources, module sees sources');
  });
});
