/**
 * A model's field definitions as a client sees them (spec §2.1 rule 2, `GET /api/get_registry`):
 * every public field's registry entry, `visible_setting_holds` evaluated on the caller's company
 * settings, labels in the caller's language. Needs the read right on the model.
 */
import { assertRight } from '../access/record-access.js';
import { FieldForgeError } from '../errors.js';
import { callerLanguage, translateRegistry } from '../i18n/translations.js';
import { currentEnv, withEnv } from '../orm/env.js';
import type { RegistryEntry } from '../orm/fields/field.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { QuerySet } from '../orm/queryset.js';

export async function describeModel(meta: ModelMeta, language: { acceptLanguage?: string | null } = {}): Promise<Record<string, RegistryEntry>> {
  assertRight(meta, 'read');
  const out: Record<string, RegistryEntry> = {};
  for (const [name, f] of meta.fields) if (!f.options.internal) out[name] = f.describe();
  // Each distinct `visible_setting` is evaluated once per call.
  const holds = new Map<string, boolean>();
  for (const entry of Object.values(out)) {
    const condition = entry.visible_setting;
    if (condition === undefined) continue;
    if (!holds.has(condition)) holds.set(condition, await settingHolds(condition));
    entry.visible_setting_holds = holds.get(condition)!;
  }
  // Labels in the caller's language (the user's `lang`, else `Accept-Language`; active ones only).
  return translateRegistry(meta.name, out, await callerLanguage({ acceptLanguage: language.acceptLanguage ?? null }));
}

/**
 * Whether the caller's current company's `Settings` record matches `condition`, read as the
 * platform: the settings decide what a form shows, whoever may read them. No company, no settings
 * record, or a condition that does not parse or resolve (a 400 of the declaration) → false: a
 * gated field stays hidden, as a record rule that does not parse matches nothing.
 */
async function settingHolds(condition: string): Promise<boolean> {
  const { companyId, registry } = currentEnv();
  if (companyId === null || !registry.has('Settings')) return false;
  try {
    return await withEnv({ su: true }, () =>
      new QuerySet(registry.meta('Settings')).filter({ company: companyId }).filter(condition).exists());
  } catch (err) {
    if (err instanceof FieldForgeError && err.status === 400) return false;
    throw err;
  }
}
