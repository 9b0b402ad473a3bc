/**
 * Record rules declared in a module's YAML (`data_type: RecordRule`): loaded with their groups
 * resolved by identifier, upserted by identifier on upgrade, and enforced for members of those
 * groups only. Also: model code can elevate explicitly (`withEnv({su: true})`).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { loadAccessProfile } from '../../src/access/access-profile.js';
import { AccessError } from '../../src/errors.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { currentEnv, withEnv } from '../../src/orm/env.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const MODEL = `import { Model, fields } from 'fieldforge';
export class RuleProbeItem extends Model {
  static override fields = { name: fields.Char({ required: true }) };
}
`;

const SECURITY = `- data_type: Group
  identifier: group_probe
  name: Probe users
- data_type: ModelAccess
  identifier: access_probe_user
  name: RuleProbeItem / probe users
  model: RuleProbeItem
  group: group_probe
  read_perm: true
  write_perm: true
  create_perm: true
- data_type: ModelAccess
  identifier: access_probe_admin
  name: RuleProbeItem / administrators
  model: RuleProbeItem
  group: core.group_admin
  read_perm: true
  write_perm: true
  create_perm: true
  delete_perm: true
- data_type: RecordRule
  identifier: rule_probe_public
  name: Probe users see public items
  model: RuleProbeItem
  filter: "Q(name__startswith='Public')"
  groups: [group_probe]
  perm_create: false
`;

const ITEMS = `- data_type: RuleProbeItem
  identifier: item_public
  name: Public item
- data_type: RuleProbeItem
  identifier: item_private
  name: Private item
`;

let root: string;
let t: TestDatabase;
let probeKey: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-rule-probe-'));
  const mod = join(root, 'rule_probe');
  await mkdir(join(mod, 'models'), { recursive: true });
  await mkdir(join(mod, 'security'));
  await mkdir(join(mod, 'data'));
  await writeFile(join(mod, 'manifest.yaml'), 'name: Rule probe\nidentifier: rule_probe\ndependencies: [core]\n');
  await writeFile(join(mod, 'models', 'index.ts'), MODEL);
  await writeFile(join(mod, 'security', 'access.yaml'), SECURITY);
  await writeFile(join(mod, 'data', 'items.yaml'), ITEMS);
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['rule_probe'] });
  ({ key: probeKey } = await t.run(() => createServiceAccountKey({ name: 'probe', groups: ['core.group_user', 'rule_probe.group_probe'] })));
});
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const names = async (authorization?: string) => {
  const res = await t.api('POST', '/api/query/RuleProbeItem', { fields: ['name'], order_by: ['name ASC'] }, authorization ? { authorization } : {});
  expect(res.statusCode, res.body).toBe(200);
  return res.json().map((r: { name: string }) => r.name);
};

describe('record rules from module data', () => {
  it('loads the rule with its groups resolved by identifier', async () => {
    const [rule] = await t.run(() => RecordRule.query({ identifier: 'rule_probe.rule_probe_public' }).read(['model', 'filter', 'groups.identifier', 'perm_read', 'perm_create']));
    expect(rule).toMatchObject({
      model: 'RuleProbeItem', filter: "Q(name__startswith='Public')", perm_read: true, perm_create: false,
      groups: [expect.objectContaining({ identifier: 'rule_probe.group_probe' })],
    });
  });

  it('applies to the members of its groups only', async () => {
    expect(await names(`Bearer ${probeKey}`)).toEqual(['Public item']);
    expect(await names()).toEqual(['Private item', 'Public item']);
  });

  it('an upgrade updates the rule instead of adding one', async () => {
    await t.platform.install(t.name, { update: ['rule_probe'] });
    expect(await t.run(() => RecordRule.query("Q(identifier__startswith='rule_probe.')").count())).toBe(1);
    expect(await names(`Bearer ${probeKey}`)).toEqual(['Public item']);
  });

  it('model code running as a restricted user can elevate explicitly', async () => {
    const outcome = await t.run(async () => {
      const env = currentEnv();
      const [probeUser] = await new QuerySet(env.registry.meta('User')).filter({ name: 'probe' }).ids();
      const access = await loadAccessProfile(env.trx, env.registry, { uid: probeUser!, serviceAccountId: null });
      return withEnv({ su: false, uid: probeUser!, access }, async () => {
        const restricted = await new QuerySet(env.registry.meta('RuleProbeItem')).ids();
        const denied = await new QuerySet(env.registry.meta('ApiKey')).ids().then(() => null, (err: unknown) => err);
        const elevated = await withEnv({ su: true }, () => new QuerySet(env.registry.meta('RuleProbeItem')).ids());
        return { restricted: restricted.length, denied, elevated: elevated.length };
      });
    });
    expect(outcome.restricted).toBe(1);
    expect(outcome.denied).toBeInstanceOf(AccessError);
    expect(outcome.elevated).toBe(2);
  });
});
