/**
 * Settings > Modules over HTTP (spec §2.7, CONTRACTS C2): the catalogue with each module's state,
 * install/upgrade marks (administrators only; 403 otherwise, nothing written), the restart message
 * with the command line, and the marks really applied by the next start (`applyPendingModules`,
 * what `fieldforge serve` runs before serving) — then cleared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { Module } from '../../modules/core/models/module.js';
import { applyPendingModules, clearMarks, pendingMarks } from '../../src/platform/pending-modules.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let userKey: string;

beforeAll(async () => {
  t = await testDatabase('full');
  ({ key: userKey } = await t.run(() => createServiceAccountKey({ name: 'ordinary', groups: ['core.group_user'] })));
});
afterAll(async () => { await t?.close(); });

interface Entry { identifier: string; name: string; state: string; pending: string | null; available: boolean; color: string; icon: string; description: string }

async function catalogue(): Promise<Map<string, Entry>> {
  const res = await t.api('GET', '/api/modules');
  expect(res.statusCode, res.body).toBe(200);
  return new Map((res.json() as Entry[]).map((e) => [e.identifier, e]));
}

const moduleRows = () => t.run(async () => Module.query().order_by('identifier ASC').read(['identifier', 'state', 'pending']));
const asUser = (method: 'GET' | 'POST' | 'DELETE', url: string) => t.api(method, url, undefined, { authorization: `Bearer ${userKey}` });

describe('the catalogue', () => {
  it('lists every module of the catalogue with its state and manifest facts, by name', async () => {
    const res = await t.api('GET', '/api/modules');
    const list = res.json() as Entry[];
    expect(list.map((e) => e.name)).toEqual([...list.map((e) => e.name)].sort((a, b) => a.localeCompare(b)));
    const byId = await catalogue();
    expect([...byId.keys()]).toEqual(expect.arrayContaining(['core', 'contacts', 'project', 'sales']));
    expect(byId.get('contacts')).toMatchObject({ state: 'installed', pending: null, available: true });
    expect(byId.get('project')).toMatchObject({ state: 'installed', pending: null });
    expect(byId.get('sales')).toMatchObject({ name: 'Sales', state: 'uninstalled', pending: null, icon: 'receipt', color: '#16A34A' });
    expect(byId.get('sales')!.description).toMatch(/^Quotations and sales orders/);
  });

  it('is refused without a credential (401) and open to readers of Module', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/modules', headers: { 'x-db-name': t.name } })).statusCode).toBe(401);
    expect((await asUser('GET', '/api/modules')).statusCode).toBe(200);
  });
});

describe('marks', () => {
  it('a non-administrator may not mark or unmark (403), and nothing is written', async () => {
    const before = await moduleRows();
    for (const url of ['/api/modules/sales/install', '/api/modules/contacts/upgrade']) {
      const res = await asUser('POST', url);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error).toBe('AccessError');
    }
    expect((await asUser('DELETE', '/api/modules/sales/pending')).statusCode).toBe(403);
    expect(await moduleRows()).toEqual(before);
  });

  it('bad marks answer 400/404 with {detail, error}', async () => {
    const installed = await t.api('POST', '/api/modules/contacts/install');
    expect(installed.statusCode).toBe(400);
    expect(installed.json()).toMatchObject({ error: 'BadRequest', detail: "Module 'contacts' is already installed; upgrade it instead" });
    const notInstalled = await t.api('POST', '/api/modules/sales/upgrade');
    expect(notInstalled.json()).toMatchObject({ error: 'BadRequest', detail: "Module 'sales' is not installed; install it instead" });
    const unknown = await t.api('POST', '/api/modules/no_such_module/install');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'NotFound', detail: "No module 'no_such_module' in the catalogue" });
  });

  it('install marks the module, says a restart applies it with the command line, and loads nothing yet', async () => {
    const res = await t.api('POST', '/api/modules/sales/install');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.command).toBe(`npx fieldforge -db ${t.name} --init sales`);
    expect(body.message).toBe(`Sales is marked for installation. Restart the server to apply, or run: npx fieldforge -db ${t.name} --init sales`);
    expect(body.with_dependencies).toEqual([]);
    expect(body.module).toMatchObject({ identifier: 'sales', state: 'uninstalled', pending: 'install' });
    expect((await catalogue()).get('sales')).toMatchObject({ state: 'uninstalled', pending: 'install' });
    // Marked twice: still one row, same answer.
    expect((await t.api('POST', '/api/modules/sales/install')).statusCode).toBe(200);
    expect((await moduleRows()).filter((r) => r.identifier === 'sales')).toHaveLength(1);
    // Not installed: its models are not served.
    expect((await t.api('POST', '/api/query/SaleOrder', {})).statusCode).toBe(404);
    expect(await pendingMarks(t.platform, t.name)).toEqual({ install: ['sales'], upgrade: [] });
  });

  it('a mark can be taken back', async () => {
    const res = await t.api('DELETE', '/api/modules/sales/pending');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ identifier: 'sales', state: 'uninstalled', pending: null });
    expect((await moduleRows()).some((r) => r.identifier === 'sales')).toBe(false);
    expect(await pendingMarks(t.platform, t.name)).toEqual({ install: [], upgrade: [] });
  });

  it('upgrade marks an installed module', async () => {
    const res = await t.api('POST', '/api/modules/contacts/upgrade');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().message).toBe(`Contacts is marked for upgrade. Restart the server to apply, or run: npx fieldforge -db ${t.name} --update contacts`);
    expect((await catalogue()).get('contacts')).toMatchObject({ state: 'installed', pending: 'upgrade' });
  });
});

describe('the next start applies the marks', () => {
  it('installs what is marked for install, upgrades what is marked for upgrade, then clears the marks', async () => {
    expect((await t.api('POST', '/api/modules/sales/install')).statusCode).toBe(200);
    const result = await applyPendingModules(t.platform, t.name);
    expect(result?.installed).toEqual(['sales']);
    expect(result?.updated).toEqual(['contacts']);
    const byId = await catalogue();
    expect(byId.get('sales')).toMatchObject({ state: 'installed', pending: null });
    expect(byId.get('contacts')).toMatchObject({ state: 'installed', pending: null });
    expect(await pendingMarks(t.platform, t.name)).toEqual({ install: [], upgrade: [] });
    // The module is served now, as after a command-line install.
    expect((await t.api('POST', '/api/query/SaleOrder', { fields: ['name'] })).statusCode).toBe(200);
    // Nothing left to do: the next start does nothing.
    expect(await applyPendingModules(t.platform, t.name)).toBeNull();
  }, 120_000);

  it('the command line clears the marks its install satisfied', async () => {
    expect((await t.api('POST', '/api/modules/project/upgrade')).statusCode).toBe(200);
    const done = await t.platform.install(t.name, { update: ['project'] });
    await clearMarks(t.platform, t.name, done);
    expect((await catalogue()).get('project')).toMatchObject({ state: 'installed', pending: null });
  }, 120_000);
});

describe('the Settings actions', () => {
  it("open client screens; the system's are administrators' (groups), the profile everyone's", async () => {
    const res = await t.api('POST', '/api/query/WindowAction', {
      fields: ['identifier', 'model', 'client_view', 'groups.identifier'],
      filter_str: "Q(identifier__in=['core.action_api_keys', 'core.action_api_reference', 'core.action_modules', 'core.action_profile', 'core.action_users', 'core.action_companies'])",
      order_by: ['identifier ASC'],
    });
    expect(res.statusCode, res.body).toBe(200);
    const actions = (res.json() as { identifier: string; model: string; client_view: string | null; groups: { identifier: string }[] }[])
      .map((a) => [a.identifier, a.model, a.client_view, a.groups.map((g) => g.identifier)]);
    expect(actions).toEqual([
      ['core.action_api_keys', 'ApiKey', 'api_keys', ['core.group_admin']],
      ['core.action_api_reference', 'ApiDocsShare', 'api_reference', ['core.group_admin']],
      ['core.action_companies', 'Company', null, ['core.group_admin']],
      ['core.action_modules', 'Module', 'modules', ['core.group_admin']],
      ['core.action_profile', 'User', 'profile', []],
      ['core.action_users', 'User', null, ['core.group_admin']],
    ]);
    const menus = await t.api('POST', '/api/query/UiMenu', {
      fields: ['identifier', 'parent.identifier', 'action.identifier'], filter_str: "Q(identifier__startswith='core.menu_settings')", order_by: ['identifier ASC'],
    });
    const tree = (menus.json() as { identifier: string; parent: { identifier: string } | null; action: { identifier: string } | null }[])
      .map((m) => [m.identifier, m.parent?.identifier ?? null, m.action?.identifier ?? null]);
    expect(tree).toEqual(expect.arrayContaining([
      ['core.menu_settings_general', 'core.menu_settings', null],
      ['core.menu_settings_api_keys', 'core.menu_settings_general', 'core.action_api_keys'],
      ['core.menu_settings_api_reference', 'core.menu_settings_general', 'core.action_api_reference'],
      ['core.menu_settings_users', 'core.menu_settings', 'core.action_users'],
      ['core.menu_settings_modules', 'core.menu_settings', 'core.action_modules'],
    ]));
  });
});
