/**
 * Manifests, the module catalog, dependency order and FF_ADDONS_PATH — no database needed.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config/settings.js';
import { ModuleError } from '../../src/errors.js';
import { dependencyOrder } from '../../src/modules/dependency-order.js';
import { readManifest } from '../../src/modules/manifest.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog, moduleRoots } from '../../src/modules/module-catalog.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const BAD = join(FIXTURES, 'addons-bad-manifests');
const GRAPH = join(FIXTURES, 'addons-graph');

/** The ModuleError thrown by `fn` (fails the test if it resolves or throws something else). */
async function moduleError(fn: () => Promise<unknown> | unknown): Promise<ModuleError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ModuleError);
    return err as ModuleError;
  }
  throw new Error('expected a ModuleError');
}

describe('manifests', () => {
  it('reads a valid manifest with its keys and defaults', async () => {
    const m = await readManifest(join(FIXTURES, 'modules', 'mod_base'));
    expect(m).toMatchObject({ identifier: 'mod_base', name: 'Mod Base', category: 'testing', dependencies: ['core'], color: '#123456', data: null });
  });

  it.each([
    ['mod_noid', /'identifier' must be a lowercase identifier/],
    ['mod_badid', /'identifier' must be a lowercase identifier/],
    ['mod_mismatch', /identifier 'mod_other' must match its directory name/],
    ['mod_nocore', /'dependencies' must include core/],
    ['mod_unknownkey', /unknown key 'author'/],
  ])('rejects %s with a ModuleError naming the manifest file', async (dir, message) => {
    const err = await moduleError(() => readManifest(join(BAD, dir)));
    expect(err.message).toContain(join(BAD, dir, 'manifest.yaml'));
    expect(err.message).toMatch(message);
  });

  it('rejects a module directory with a bad manifest when the catalog is scanned', async () => {
    const err = await moduleError(() => ModuleCatalog.scan([BUILTIN_MODULES_DIR, BAD]));
    expect(err.message).toContain(join(BAD, 'mod_badid', 'manifest.yaml'));
  });
});

describe('dependency order', () => {
  it('puts dependencies first, whatever order the modules were requested in', async () => {
    const catalog = await ModuleCatalog.scan([BUILTIN_MODULES_DIR, GRAPH]);
    expect(dependencyOrder(catalog, ['mod_g_c'])).toEqual(['core', 'mod_g_a', 'mod_g_b', 'mod_g_c']);
    const one = dependencyOrder(catalog, ['mod_g_d', 'mod_g_c', 'mod_g_b']);
    const two = dependencyOrder(catalog, ['mod_g_b', 'mod_g_c', 'mod_g_d', 'mod_g_c']);
    expect(one).toEqual(two);
    expect(one).toEqual(['core', 'mod_g_a', 'mod_g_b', 'mod_g_c', 'mod_g_d']);
    for (const id of one) {
      for (const dep of catalog.get(id).manifest.dependencies) expect(one.indexOf(dep)).toBeLessThan(one.indexOf(id));
    }
  });

  it('names both modules when a dependency is missing', async () => {
    const catalog = await ModuleCatalog.scan([BUILTIN_MODULES_DIR, GRAPH]);
    const err = await moduleError(() => dependencyOrder(catalog, ['mod_g_missing']));
    expect(err.message).toContain('mod_g_missing');
    expect(err.message).toContain('mod_g_nowhere');
  });

  it('names an unknown requested module', async () => {
    const catalog = await ModuleCatalog.scan([BUILTIN_MODULES_DIR, GRAPH]);
    const err = await moduleError(() => dependencyOrder(catalog, ['mod_g_unheard_of']));
    expect(err.message).toContain("Unknown module 'mod_g_unheard_of'");
  });

  it('names the cycle when modules depend on each other', async () => {
    const catalog = await ModuleCatalog.scan([BUILTIN_MODULES_DIR, GRAPH]);
    const err = await moduleError(() => dependencyOrder(catalog, ['mod_g_cyc1']));
    expect(err.message).toContain('mod_g_cyc1 -> mod_g_cyc2 -> mod_g_cyc1');
    const err2 = await moduleError(() => dependencyOrder(catalog, ['mod_g_cyc2']));
    expect(err2.message).toContain('mod_g_cyc2 -> mod_g_cyc1 -> mod_g_cyc2');
  });
});

describe('FF_ADDONS_PATH', () => {
  it('splits on ":" into absolute add-on roots that come after the built-in modules', () => {
    const settings = readSettings({ FF_ADDONS_PATH: 'a:b' });
    expect(settings.addonsPaths).toEqual([resolve('a'), resolve('b')]);
    expect(moduleRoots(settings)).toEqual([BUILTIN_MODULES_DIR, resolve('a'), resolve('b')]);
    expect(readSettings({ FF_ADDONS_PATH: '' }).addonsPaths).toEqual([]);
    expect(moduleRoots(readSettings({}))).toEqual([BUILTIN_MODULES_DIR]);
  });

  it('finds the modules of every add-on root', async () => {
    const settings = readSettings({ FF_ADDONS_PATH: `${GRAPH}:${join(FIXTURES, 'modules')}` });
    const catalog = await ModuleCatalog.scan(moduleRoots(settings));
    expect(catalog.get('mod_g_a').dir).toBe(join(GRAPH, 'mod_g_a'));
    expect(catalog.get('mod_base').dir).toBe(join(FIXTURES, 'modules', 'mod_base'));
    expect(catalog.get('core').dir).toBe(join(BUILTIN_MODULES_DIR, 'core'));
  });

  it('rejects a module found in two roots, naming both places', async () => {
    const v1 = join(FIXTURES, 'addons-upgrade-v1');
    const v2 = join(FIXTURES, 'addons-upgrade-v2');
    const settings = readSettings({ FF_ADDONS_PATH: `${v1}:${v2}` });
    const err = await moduleError(() => ModuleCatalog.scan(moduleRoots(settings)));
    expect(err.message).toContain("'mod_up'");
    expect(err.message).toContain(join(v1, 'mod_up'));
    expect(err.message).toContain(join(v2, 'mod_up'));
  });

  it('rejects an add-on root that does not exist', async () => {
    const err = await moduleError(() => ModuleCatalog.scan([BUILTIN_MODULES_DIR, join(FIXTURES, 'addons-nowhere')]));
    expect(err.message).toContain('addons-nowhere');
  });
});
