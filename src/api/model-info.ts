/**
 * What a client needs to know about a model beyond its fields (`GET /api/model-info/{model}`),
 * so the web client can draw its list and form without guessing: the label, the default order,
 * whether it is archivable, the API methods and which of them open a wizard (titles in the
 * caller's language), the reports that print it, the fields whose change the form sends to
 * `ui-effect`, and the caller's own rights on it (to show or hide New, Save and Delete).
 * Needs the read right on the model; reports are listed as the caller may read them.
 */
import { activeAccess, assertRight } from '../access/record-access.js';
import type { Permission } from '../access/access-profile.js';
import { callerLanguage, modelLabel, translationsOf } from '../i18n/translations.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { QuerySet } from '../orm/queryset.js';
import { currentEnv } from '../orm/env.js';
import { stateLocksOf } from '../orm/state-locks.js';

export interface ModelInfo {
  model: string;
  label: string;
  order_by: string[];
  archivable: boolean;
  rec_name: string | null;
  api_methods: string[];
  /** The API methods that act on records (`ids`/`selection`); the others are model-level. */
  record_methods: string[];
  wizards: { method: string; title: string }[];
  reports: { id: number; identifier: string | null; name: string; format: string }[];
  effect_fields: string[];
  /** `_state_locks`: in the state `when` matches, `fields` are read-only and `methods` are refused. */
  state_locks: { when: string; fields: string[]; methods: string[] }[];
  create: boolean;
  write: boolean;
  unlink: boolean;
  /** `_mail_thread`: its saved records have a conversation (the chatter of the messaging module). */
  mail_thread: boolean;
}

export async function describeModelInfo(meta: ModelMeta, language: { acceptLanguage?: string | null } = {}): Promise<ModelInfo> {
  assertRight(meta, 'read');
  const lang = await callerLanguage({ acceptLanguage: language.acceptLanguage ?? null });
  const titleKeys = [...meta.wizards.values()].map((w) => `model:${w.key}`);
  const titles = titleKeys.length ? await translationsOf(lang, titleKeys) : new Map<string, string>();
  const wizards = [...meta.wizards.values()].map((w) => ({ method: w.method, title: titles.get(`model:${w.key}`) ?? w.title }));
  return {
    model: meta.name,
    label: await modelLabel(meta.name, lang),
    order_by: [...meta.orderBy],
    archivable: meta.isArchivable,
    rec_name: meta.recName,
    api_methods: [...meta.apiMethods],
    record_methods: [...meta.apiMethods].filter((m) => typeof (meta.cls.prototype as unknown as Record<string, unknown>)[m] === 'function'),
    wizards,
    reports: await reportsOf(meta),
    effect_fields: effectFields(meta),
    state_locks: stateLocksOf(meta).map((l) => ({ when: l.when, fields: l.fields.map((f) => f.name), methods: [...l.methods] })),
    create: granted(meta, 'create'),
    write: granted(meta, 'write'),
    unlink: granted(meta, 'delete'),
    mail_thread: meta.cls._mail_thread === true,
  };
}

function granted(meta: ModelMeta, perm: Permission): boolean {
  const access = activeAccess();
  return !access || Boolean(access.rights.get(meta.name)?.has(perm));
}

/** Fields with an effect method, and fields a stored computed field depends on (first path segment). */
function effectFields(meta: ModelMeta): string[] {
  const names = new Set<string>(meta.uiEffects.keys());
  for (const field of meta.fields.values()) {
    if (!field.isComputed) continue;
    for (const dep of field.options.depends ?? []) {
      const head = dep.split('.')[0]!;
      if (meta.fields.has(head)) names.add(head);
    }
  }
  return [...names].sort();
}

/** The reports printing this model that the caller may read (none when Report is not readable). */
async function reportsOf(meta: ModelMeta): Promise<ModelInfo['reports']> {
  const { registry } = currentEnv();
  if (!registry.has('Report')) return [];
  const reportMeta = registry.meta('Report');
  const access = activeAccess();
  if (access && !access.rights.get('Report')?.has('read')) return [];
  const rows = await new QuerySet(reportMeta).filter({ model: meta.name }).read(['identifier', 'name', 'format']);
  return rows.map((r) => ({ id: r.id as number, identifier: (r.identifier as string | null) ?? null, name: r.name as string, format: r.format as string }));
}
