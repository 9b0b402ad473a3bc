/**
 * What a form shows and reads, from its arch and the registries of its lines: the fields drawn
 * (those whose setting holds), their arch properties, each lines table's model registry, columns
 * and effect fields, and the paths one read of the record needs.
 */
import { api } from '../../api.js';
import { modelRights } from '../../fields/model-rights.js';
import { archFields } from './form-layout.js';
import { formPaths } from './form-paths.js';
import { defaultLineColumns } from './line-columns.js';

/**
 * @typedef {import('../../fields/field-props.js').FieldInfo} FieldInfo
 * @typedef {{
 *   fields: Record<string, FieldInfo>,
 *   arch: import('./form-layout.js').ArchNode[],
 *   names: string[],
 *   properties: Record<string, Record<string, any>>,
 *   lineFields: Record<string, Record<string, FieldInfo>>,
 *   lineColumns: Record<string, string[]>,
 *   lineEffects: Record<string, string[]>,
 *   paths: string[],
 * }} FormShape
 */

/** Registry entries with their names. @param {Record<string, any>} registry @returns {Record<string, FieldInfo>} */
export function named(registry) {
  return Object.fromEntries(Object.entries(registry ?? {}).map(([name, f]) => [name, { ...f, name }]));
}

/**
 * @param {Record<string, FieldInfo>} fields @param {any[]} arch
 * @returns {Promise<FormShape>}
 */
export async function formShape(fields, arch) {
  const shown = archFields(arch).filter((f) => fields[f.name] && fields[f.name].visible_setting_holds !== false);
  const names = [...new Set(shown.map((f) => f.name))];
  const properties = Object.fromEntries(shown.map((f) => [f.name, f.properties]));
  /** @type {Record<string, Record<string, FieldInfo>>} */
  const lineFields = {};
  /** @type {Record<string, string[]>} */
  const lineColumns = {};
  /** @type {Record<string, string[]>} */
  const lineEffects = {};
  await Promise.all(names.filter((n) => fields[n].type === 'OneToMany' && fields[n].related_model).map(async (name) => {
    const model = /** @type {string} */ (fields[name].related_model);
    const [registry, info] = await Promise.all([api.registry(model), modelRights(model)]);
    lineFields[model] = named(registry);
    lineColumns[name] = defaultLineColumns(lineFields[model], fields[name].related_name);
    lineEffects[name] = /** @type {any} */ (info)?.effect_fields ?? [];
  }));
  return { fields, arch, names, properties, lineFields, lineColumns, lineEffects, paths: formPaths(fields, names, lineFields, lineColumns) };
}
