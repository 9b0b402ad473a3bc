/**
 * A module's translation files: `i18n/<code>.yaml` (spec §2.7, ARCHITECTURE §3), read when a
 * language is activated. One file per language and module, a mapping of source items to their
 * text in that language (any part may be left out):
 *
 * ```yaml
 * models:                      # by model name; a module may translate any installed model
 *   Currency:
 *     label: Devise            # the model's verbose name
 *     fields:                  # field labels (get_registry `label`)
 *       symbol: Symbole
 *     selections:              # Selection choice labels, by field then stored value
 *       position: { Before: Avant, After: Après }
 * views:                       # UiView names, by view identifier (bare = this module's)
 *   view_user_list: Utilisateurs
 * actions:                     # WindowAction names, by identifier
 *   action_users: Utilisateurs
 * menus:                       # UiMenu names, by identifier
 *   menu_settings: Paramètres
 * ```
 *
 * Each entry becomes a `Translation` row keyed by what it translates: `model:<Model>`,
 * `field:<Model>.<field>`, `selection:<Model>.<field>.<value>`, `view:<identifier>`,
 * `action:<identifier>`, `menu:<identifier>` (identifiers qualified: `core.menu_settings`).
 *
 * A regional language also takes its base language's file first: activating `fr-CA` loads
 * `fr.yaml`, then `fr-CA.yaml` over it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ModuleError } from '../errors.js';

export interface TranslationEntry {
  readonly key: string;
  readonly value: string;
}

const TOP_KEYS = new Set(['models', 'views', 'actions', 'menus']);

/** The files `code` loads from a module directory, most general first (`fr.yaml`, `fr-CA.yaml`). */
export function translationFileNames(code: string): string[] {
  const base = code.split('-')[0]!;
  return base === code ? [`${code}.yaml`] : [`${base}.yaml`, `${code}.yaml`];
}

/** The entries of `<moduleDir>/i18n/<file>` for every file `code` loads (a later file wins). */
export async function readTranslationFiles(moduleId: string, moduleDir: string, code: string): Promise<TranslationEntry[]> {
  const byKey = new Map<string, string>();
  for (const name of translationFileNames(code)) {
    const file = join(moduleDir, 'i18n', name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    for (const entry of parseTranslations(moduleId, text, file)) byKey.set(entry.key, entry.value);
  }
  return [...byKey].map(([key, value]) => ({ key, value }));
}

/** The entries of one translation file's text; `ModuleError` naming the file and place when malformed. */
export function parseTranslations(moduleId: string, text: string, file: string): TranslationEntry[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ModuleError(`${file}: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return [];
  const top = mapping(doc, file);
  const out: TranslationEntry[] = [];
  const add = (key: string, value: unknown, where: string) => {
    if (typeof value !== 'string' && typeof value !== 'number') throw new ModuleError(`${file}: ${where} must be a text`);
    out.push({ key, value: String(value) });
  };
  for (const key of Object.keys(top)) {
    if (!TOP_KEYS.has(key)) throw new ModuleError(`${file}: unknown section '${key}' (expected models, views, actions, menus)`);
  }
  for (const [model, raw] of Object.entries(mapping(top.models ?? {}, `${file} models`))) {
    const m = mapping(raw, `${file} models.${model}`);
    for (const key of Object.keys(m)) {
      if (!['label', 'fields', 'selections'].includes(key)) throw new ModuleError(`${file}: models.${model}.${key} is unknown (expected label, fields, selections)`);
    }
    if (m.label !== undefined) add(`model:${model}`, m.label, `models.${model}.label`);
    for (const [field, label] of Object.entries(mapping(m.fields ?? {}, `${file} models.${model}.fields`))) {
      add(`field:${model}.${field}`, label, `models.${model}.fields.${field}`);
    }
    for (const [field, choices] of Object.entries(mapping(m.selections ?? {}, `${file} models.${model}.selections`))) {
      for (const [value, label] of Object.entries(mapping(choices, `${file} models.${model}.selections.${field}`))) {
        add(`selection:${model}.${field}.${value}`, label, `models.${model}.selections.${field}.${value}`);
      }
    }
  }
  for (const [section, prefix] of [['views', 'view'], ['actions', 'action'], ['menus', 'menu']] as const) {
    for (const [identifier, name] of Object.entries(mapping(top[section] ?? {}, `${file} ${section}`))) {
      const qualified = identifier.includes('.') ? identifier : `${moduleId}.${identifier}`;
      add(`${prefix}:${qualified}`, name, `${section}.${identifier}`);
    }
  }
  return out;
}

function mapping(value: unknown, where: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ModuleError(`${where}: must be a mapping`);
  return value as Record<string, unknown>;
}
