/**
 * What a client needs to show an API method's wizard (`POST /api/action-meta/{model}/{method}`,
 * CONTRACTS C1): `{model, method, title, fields, arch, defaults}`. `fields` are the inputs'
 * registry entries as `get_registry` gives a model's, title and labels in the caller's language
 * (translation files file them under the model `<Model>.<method>`: its `label` is the title).
 * `defaults` combine each input's declared default with what the wizard's `defaults` method
 * returns for the request's context (`active_ids` as sent, `active_model` added), converted like
 * executed inputs; links come as `{id, display_name}`, as a fetch shows a bare link.
 * Needs the read right on the model; a method without a wizard is a 404.
 */
import { assertRight } from '../access/record-access.js';
import { BadRequest, NotFound } from '../errors.js';
import { callerLanguage, translateRegistry, translationsOf, withCallerLanguage } from '../i18n/translations.js';
import type { RegistryEntry } from '../orm/fields/field.js';
import { ManyToManyField, ManyToOneField, isRecordId } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import type { Wizard } from '../orm/wizards.js';
import { LinkNames } from './link-names.js';
import { inputValue } from './wizard-inputs.js';

export interface WizardMeta {
  model: string;
  method: string;
  title: string;
  fields: Record<string, RegistryEntry>;
  arch: readonly unknown[];
  defaults: Record<string, unknown>;
}

export interface WizardMetaRequest {
  context?: Record<string, unknown>;
  /** The request's `Accept-Language`. */
  acceptLanguage?: string | null;
}

export async function describeWizard(meta: ModelMeta, method: string, request: WizardMetaRequest = {}): Promise<WizardMeta> {
  assertRight(meta, 'read');
  const wizard = meta.wizards.get(method);
  if (!wizard) throw new NotFound(`${meta.name} has no wizard for '${method.slice(0, 60)}'`);
  const context: Record<string, unknown> = { ...(request.context ?? {}), active_model: meta.name };
  const activeIds = context.active_ids;
  if (activeIds !== undefined && activeIds !== null && !(Array.isArray(activeIds) && activeIds.every(isRecordId))) {
    throw new BadRequest("'context.active_ids' must be an array of record ids");
  }
  const language = { lang: context.lang, acceptLanguage: request.acceptLanguage ?? null };
  const lang = await callerLanguage(language);
  const entries: Record<string, RegistryEntry> = {};
  for (const [name, field] of wizard.fields) {
    // What describes a column (its index, what deleting the target does) means nothing for an input.
    const { on_delete: _onDelete, index: _index, ...entry } = field.describe();
    entries[name] = entry;
  }
  const titleKey = `model:${wizard.key}`;
  return {
    model: meta.name,
    method,
    title: (await translationsOf(lang, [titleKey])).get(titleKey) ?? wizard.title,
    fields: await translateRegistry(wizard.key, entries, lang),
    arch: wizard.arch,
    defaults: await withCallerLanguage(language, () => wizardDefaults(meta, wizard, context)),
  };
}

async function wizardDefaults(meta: ModelMeta, wizard: Wizard, context: Record<string, unknown>): Promise<Record<string, unknown>> {
  const given: Record<string, unknown> = {};
  for (const [name, field] of wizard.fields) if (field.options.default !== undefined) given[name] = await field.defaultValue();
  if (wizard.defaults) {
    const fn = (meta.cls as unknown as Record<string, (context: Record<string, unknown>) => unknown>)[wizard.defaults]!;
    const computed = await fn.call(meta.cls, context);
    if (computed && typeof computed === 'object' && !Array.isArray(computed)) {
      for (const name of wizard.fields.keys()) if (Object.hasOwn(computed, name)) given[name] = (computed as Record<string, unknown>)[name];
    }
  }
  const values: Record<string, unknown> = {};
  const names = new LinkNames();
  for (const [name, value] of Object.entries(given)) {
    const field = wizard.fields.get(name)!;
    values[name] = inputValue(field, value);
    if (field instanceof ManyToOneField && typeof values[name] === 'number') names.want(field.target, [values[name] as number]);
    if (field instanceof ManyToManyField) names.want(field.target, values[name] as number[]);
  }
  await names.load();
  for (const [name, value] of Object.entries(values)) {
    const field = wizard.fields.get(name)!;
    if (field instanceof ManyToOneField && typeof value === 'number') values[name] = names.link(field.target, value);
    if (field instanceof ManyToManyField) values[name] = (value as number[]).map((id) => names.link(field.target, id));
  }
  return values;
}
