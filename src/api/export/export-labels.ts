/**
 * The words of an export in the caller's language: the header row (each step's field label,
 * joined by `/` as Odoo does: `Customer/Name`), Selection choice labels, and the model's verbose
 * name for the sheet and the file. An import-compatible export heads its columns with the paths
 * themselves, which is what an import maps without guessing.
 */
import { modelLabel, translateRegistry } from '../../i18n/translations.js';
import type { Field, RegistryEntry } from '../../orm/fields/field.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import type { ExportColumn } from './export-columns.js';

export interface ExportLabels {
  readonly modelLabel: string;
  readonly headers: readonly string[];
  /** Translated labels of each Selection leaf's values. */
  readonly choices: ReadonlyMap<Field, ReadonlyMap<string, string>>;
}

export async function exportLabels(meta: ModelMeta, columns: readonly ExportColumn[], importCompatible: boolean, lang: string): Promise<ExportLabels> {
  // One translation lookup per model named by a step (none for the source language).
  const byModel = new Map<string, Set<Field>>();
  for (const column of columns) {
    for (const field of column.steps) {
      const set = byModel.get(field.model.name) ?? byModel.set(field.model.name, new Set()).get(field.model.name)!;
      set.add(field);
    }
  }
  const entries = new Map<Field, RegistryEntry>();
  for (const [model, fields] of byModel) {
    const described: Record<string, RegistryEntry> = {};
    for (const f of fields) described[f.name] = f.describe();
    const translated = await translateRegistry(model, described, lang);
    for (const f of fields) entries.set(f, translated[f.name]!);
  }
  const choices = new Map<Field, Map<string, string>>();
  for (const column of columns) {
    const leaf = column.steps[column.steps.length - 1]!;
    const list = (entries.get(leaf) as { choices?: [string, string][] } | undefined)?.choices;
    if (leaf.type === 'Selection' && list) choices.set(leaf, new Map(list));
  }
  const headers = columns.map((c) => importCompatible ? c.path : c.steps.map((f) => entries.get(f)?.label ?? f.label).join('/'));
  return { modelLabel: await modelLabel(meta.name, lang), headers, choices };
}
