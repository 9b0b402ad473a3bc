/**
 * The per-database registry: composes each model's final class from its declaration and the
 * extensions of the modules installed in that database (in dependency order), binds fields,
 * creates reverse relations from `related_name`, resolves join tables and records which stored
 * computed fields recompute on which changes. Two databases in one process may hold different
 * registries; a model of a module not installed in a database does not exist there.
 */
import { ModuleError, NotFound } from '../errors.js';
import type { Field } from './fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField, RelationalField } from './fields/relational-fields.js';
import { AUDIT_FIELDS, genericFields } from './generic-fields.js';
import { Model, type ModelClass, type UniqueWhen } from './model.js';
import type { ModelExtension } from './model-extension.js';
import type { ModelTrait } from './model-trait.js';
import type { RecurringJob } from './recurring-job.js';
import type { ModelMeta } from './model-meta.js';
import { defineRecordAccessors } from './record-accessors.js';
import { buildRecomputeTriggers, type RecomputeTrigger } from './recompute-triggers.js';
import { bindWizards } from './wizards.js';
import { bindStateLocks } from './state-locks.js';

/** The model code one module contributes. */
export interface ModuleCode {
  readonly id: string;
  /** The module's directory (its `i18n/` files are read from there); absent for code built in memory. */
  readonly dir?: string;
  readonly declarations: readonly ModelClass[];
  readonly extensions: readonly ModelExtension[];
  /** Behaviours it gives every model that asks for them (`model-trait.ts`); none when absent. */
  readonly traits?: readonly ModelTrait[];
  /** Work done again and again in the databases that have the module (`recurring-job.ts`). */
  readonly recurringJobs?: readonly RecurringJob[];
}

/** A named database constraint, for turning a violation into a precise `ValidationError`. */
export interface ConstraintInfo {
  readonly model: string;
  readonly fields: readonly string[];
  readonly kind: 'unique' | 'foreign-key';
  /** The violation's message when the declaration gives one (`_unique_when`). */
  readonly message?: string;
}

const FIELD_NAME = /^[a-z][a-z0-9_]*$/;
const RESERVED_NAMES = new Set(Object.getOwnPropertyNames(Model.prototype).concat(['_values', '_batch']));

export class Registry {
  readonly models = new Map<string, ModelMeta>();
  readonly constraints = new Map<string, ConstraintInfo>();
  /** `<model>.<field>` → stored computed fields to recompute when it changes. */
  readonly triggers = new Map<string, RecomputeTrigger[]>();

  /** Module identifier → directory, for the modules loaded from disk. */
  readonly moduleDirs: ReadonlyMap<string, string>;
  /** The recurring jobs of the installed modules (`recurring-job.ts`). */
  recurringJobs: readonly RecurringJob[] = [];

  private constructor(readonly modules: readonly string[], dirs: ReadonlyMap<string, string>) {
    this.moduleDirs = dirs;
  }

  /** The model's metadata; `NotFound` when the model does not exist in this database. */
  meta(name: string): ModelMeta {
    const meta = this.models.get(name);
    if (!meta) throw new NotFound(`Model '${String(name).slice(0, 80)}' does not exist`);
    return meta;
  }

  has(name: string): boolean {
    return this.models.has(name);
  }

  static build(modules: readonly ModuleCode[]): Registry {
    const dirs = new Map(modules.filter((m) => m.dir).map((m) => [m.id, m.dir!]));
    const registry = new Registry(modules.map((m) => m.id), dirs);
    registry.recurringJobs = modules.flatMap((m) => m.recurringJobs ?? []);
    const entries = collectEntries(modules);
    const traits = modules.flatMap((m) => m.traits ?? []);
    const hasUser = entries.has('User');
    for (const [name, entry] of entries) {
      registry.models.set(name, composeModel(registry, name, entry, hasUser, traits));
    }
    for (const meta of registry.models.values()) resolveRelations(registry, meta);
    for (const meta of registry.models.values()) {
      validateDeclarations(meta);
      bindStateLocks(registry, meta);
      // Wizard inputs refer to models by name: bound once every model is composed.
      Object.assign(meta, { wizards: bindWizards(registry, meta) });
      defineRecordAccessors(meta);
      registerConstraints(registry, meta);
    }
    for (const [key, list] of buildRecomputeTriggers(registry)) registry.triggers.set(key, list);
    return registry;
  }
}

interface Entry {
  module: string;
  declaration: ModelClass;
  extensions: ModelExtension[];
}

function collectEntries(modules: readonly ModuleCode[]): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  for (const mod of modules) {
    for (const declaration of mod.declarations) {
      const name = declaration.modelName();
      const existing = entries.get(name);
      if (existing) {
        throw new ModuleError(
          `Model '${name}' is declared by both '${existing.module}' and '${mod.id}'; a later module extends a model with extendModel('${name}', …)`,
        );
      }
      entries.set(name, { module: mod.id, declaration, extensions: [] });
    }
    for (const ext of mod.extensions) {
      const entry = entries.get(ext.model);
      if (!entry) {
        throw new ModuleError(`Module '${mod.id}' extends model '${ext.model}', which none of its dependencies declares`);
      }
      entry.extensions.push(ext);
    }
  }
  return entries;
}

/** `SaleOrderLine` → `sale_order_line`. */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function composeModel(registry: Registry, name: string, entry: Entry, hasUser: boolean, traits: readonly ModelTrait[]): ModelMeta {
  // A fresh subclass per database: accessors and `_meta` are defined on it, never on shared code.
  let cls: ModelClass = class extends entry.declaration {};
  for (const ext of entry.extensions) cls = ext.apply(cls);
  for (const trait of traits) if (trait.applies(cls)) cls = trait.apply(cls);
  if (cls._mail_thread && !traits.some((t) => t.name === 'mail_thread')) {
    throw new ModuleError(`${name} declares _mail_thread, which needs the messaging module: add messaging to ${entry.module}'s dependencies`);
  }
  const finalClass: ModelClass = class extends cls {};
  Object.defineProperty(finalClass, '_name', { value: name });
  Object.defineProperty(finalClass, 'name', { value: name });

  const declared = collectDeclaredFields(finalClass);
  const fields = new Map<string, Field>();
  const meta = {
    name,
    table: finalClass._table ?? snakeCase(name),
    verboseName: finalClass._verbose_name ?? name.replace(/([a-z])([A-Z])/g, '$1 $2'),
    fields,
    orderBy: finalClass._order_by ?? ['id ASC'],
    recName: null as string | null,
    isArchivable: false,
    uniqueTogether: finalClass._unique_together ?? [],
    uniqueWhen: finalClass._unique_when ?? [],
    apiMethods: new Set(finalClass._api_methods ?? []),
    wizards: new Map(),
    uiEffects: new Map(Object.entries(finalClass._ui_effects ?? {})),
    nameSearchFields: [] as string[],
    ownedBy: finalClass._owned_by ?? null,
    module: entry.module,
    cls: finalClass,
    registry,
  };
  for (const [fname, decl] of genericFields(hasUser)) fields.set(fname, decl.bind(fname, meta));
  for (const [fname, decl] of declared) {
    // Only the generic fields are in `fields` yet.
    if (fields.has(fname)) throw new ModuleError(`${name}.${fname} is a generic field and cannot be redeclared`);
    if (!FIELD_NAME.test(fname) || RESERVED_NAMES.has(fname)) {
      throw new ModuleError(`${name}: '${fname}' is not a valid field name (snake_case, not a Model method)`);
    }
    fields.set(fname, decl.bind(fname, meta));
  }
  const recName = finalClass._rec_name ?? (fields.has('name') ? 'name' : null);
  if (recName !== null && !fields.get(recName)?.isStored) {
    throw new ModuleError(`${name}._rec_name '${recName}' must name a stored field`);
  }
  meta.recName = recName;
  const active = fields.get('active');
  meta.isArchivable = active?.type === 'Boolean' && active.isStored;
  meta.nameSearchFields = finalClass._name_search_fields ?? (recName ? [recName] : []);
  finalClass._meta = meta;
  return meta;
}

/** Fields of the whole class chain, base-most first, later declarations overriding earlier ones. */
function collectDeclaredFields(cls: ModelClass): Map<string, Field> {
  const chain: ModelClass[] = [];
  for (let c: any = cls; c && c !== Model; c = Object.getPrototypeOf(c)) chain.unshift(c);
  const out = new Map<string, Field>();
  for (const c of chain) {
    if (!Object.hasOwn(c, 'fields')) continue;
    for (const [fname, decl] of Object.entries(c.fields as Record<string, Field>)) out.set(fname, decl);
  }
  return out;
}

function resolveRelations(registry: Registry, meta: ModelMeta): void {
  for (const f of [...meta.fields.values()]) {
    if (!(f instanceof RelationalField)) continue;
    const target = registry.models.get(f.targetName);
    if (!target) {
      throw new ModuleError(`${meta.name}.${f.name} refers to model '${f.targetName}', which is not installed (missing dependency?)`);
    }
    f.target = target;
    if (f instanceof ManyToOneField && f.options.related_name) {
      addReverse(target, f.options.related_name, meta, () => {
        const reverse = new OneToManyField(meta.name, f.name, { label: meta.verboseName }).bind(f.options.related_name!, target);
        reverse.target = meta;
        reverse.inverse = f;
        return reverse;
      });
    }
    if (f instanceof ManyToManyField) {
      // A reverse field made from a related_name already shares its forward field's join table
      // (swapped); resolving it again would give it a join table of its own.
      f.join ??= resolveJoin(registry, meta, f);
      if (f.options.related_name) {
        addReverse(target, f.options.related_name, meta, () => {
          const reverse = new ManyToManyField(meta.name, { label: meta.verboseName }).bind(f.options.related_name!, target);
          reverse.target = meta;
          reverse.join = { ...f.join, sourceColumn: f.join.targetColumn, targetColumn: f.join.sourceColumn };
          return reverse;
        });
      }
    }
  }
  for (const f of meta.fields.values()) {
    if (f instanceof OneToManyField && !f.inverse) {
      const inverse = f.target.fields.get(f.inverseName);
      if (!(inverse instanceof ManyToOneField) || inverse.targetName !== meta.name) {
        throw new ModuleError(`${meta.name}.${f.name}: '${f.inverseName}' is not a ManyToOne from ${f.targetName} to ${meta.name}`);
      }
      f.inverse = inverse;
    }
  }
}

function addReverse(target: ModelMeta, name: string, source: ModelMeta, make: () => Field): void {
  const existing = target.fields.get(name);
  if (existing) {
    // A module may declare the reverse side explicitly; it must then agree with the forward one.
    if (existing instanceof RelationalField && existing.targetName === source.name) return;
    throw new ModuleError(`${source.name}: related_name '${name}' clashes with field ${target.name}.${name}`);
  }
  target.fields.set(name, make());
}

function resolveJoin(registry: Registry, meta: ModelMeta, f: ManyToManyField) {
  if (f.options.through) {
    const through = registry.models.get(f.options.through);
    if (!through) throw new ModuleError(`${meta.name}.${f.name}: through model '${f.options.through}' is not installed`);
    // The audit columns (created_by, updated_by) are ManyToOnes to User too: never a link side.
    const m2os = [...through.fields.values()].filter((x): x is ManyToOneField =>
      x instanceof ManyToOneField && x.isStored && !(AUDIT_FIELDS as readonly string[]).includes(x.name));
    const [srcName, dstName] = f.options.through_fields ?? [
      m2os.find((x) => x.targetName === meta.name)?.name,
      m2os.find((x) => x.targetName === f.targetName && (meta.name !== f.targetName || x.name !== m2os.find((y) => y.targetName === meta.name)?.name))?.name,
    ];
    const src = srcName ? through.fields.get(srcName) : undefined;
    const dst = dstName ? through.fields.get(dstName) : undefined;
    if (!(src instanceof ManyToOneField) || !(dst instanceof ManyToOneField)) {
      throw new ModuleError(`${meta.name}.${f.name}: through model '${through.name}' needs ManyToOne fields to ${meta.name} and ${f.targetName}`);
    }
    return { table: through.table, sourceColumn: src.column!, targetColumn: dst.column!, throughModel: through.name };
  }
  const targetTable = registry.models.get(f.targetName)!.table;
  const sourceColumn = `${meta.table}_id`;
  const targetColumn = targetTable === meta.table ? `${f.name}_id` : `${targetTable}_id`;
  return { table: `${meta.table}_${f.name}_rel`, sourceColumn, targetColumn };
}

function validateDeclarations(meta: ModelMeta): void {
  for (const tuple of meta.uniqueTogether) {
    for (const fname of tuple) {
      if (!meta.fields.get(fname)?.column) throw new ModuleError(`${meta.name}._unique_together names '${fname}', which is not a stored field`);
    }
  }
  for (const entry of meta.uniqueWhen) {
    if (!Array.isArray(entry?.fields) || !entry.fields.length) {
      throw new ModuleError(`${meta.name}._unique_when: each entry needs a non-empty 'fields' list`);
    }
    for (const fname of entry.fields) {
      if (!meta.fields.get(fname)?.column) throw new ModuleError(`${meta.name}._unique_when names '${fname}', which is not a stored field`);
    }
    const when = meta.fields.get(entry.when);
    if (!when?.column || when.type !== 'Boolean') {
      throw new ModuleError(`${meta.name}._unique_when: 'when' must name a stored Boolean field, not '${String(entry.when)}'`);
    }
  }
  if (meta.ownedBy) {
    const { model, record } = meta.ownedBy;
    if (meta.fields.get(model)?.type !== 'Char' || !meta.fields.get(model)?.column || meta.fields.get(record)?.type !== 'Integer' || !meta.fields.get(record)?.column) {
      throw new ModuleError(`${meta.name}._owned_by names '${String(model)}' and '${String(record)}': they must be a stored Char and a stored Integer field`);
    }
  }
  for (const f of meta.fields.values()) {
    const o = f.options;
    if (o.calculate && typeof (meta.cls.prototype as any)[o.calculate] !== 'function') {
      throw new ModuleError(`${meta.name}.${f.name}: calculate method '${o.calculate}' does not exist`);
    }
    if (o.setter && typeof (meta.cls.prototype as any)[o.setter] !== 'function') {
      throw new ModuleError(`${meta.name}.${f.name}: setter method '${o.setter}' does not exist`);
    }
    if (o.editable && (!o.calculate || o.store !== true || o.setter)) {
      throw new ModuleError(`${meta.name}.${f.name}: 'editable' applies to a stored computed field (calculate + store: true) without a setter`);
    }
  }
  for (const method of meta.apiMethods) {
    if (method.startsWith('_') || (typeof (meta.cls.prototype as any)[method] !== 'function' && typeof (meta.cls as any)[method] !== 'function')) {
      throw new ModuleError(`${meta.name}._api_methods lists '${method}', which is not a public method`);
    }
  }
  for (const [fname, method] of meta.uiEffects) {
    const field = meta.fields.get(fname);
    if (!field || field.options.internal) throw new ModuleError(`${meta.name}._ui_effects names '${fname}', which is not a field of ${meta.name}`);
    if (typeof method !== 'string' || typeof (meta.cls.prototype as any)[method] !== 'function') {
      throw new ModuleError(`${meta.name}._ui_effects.${fname}: '${String(method)}' is not a record method of ${meta.name}`);
    }
  }
}

function registerConstraints(registry: Registry, meta: ModelMeta): void {
  for (const tuple of meta.uniqueTogether) {
    registry.constraints.set(constraintName(meta.table, tuple.map((n) => meta.fields.get(n)!.column!), 'uniq'), {
      model: meta.name, fields: tuple, kind: 'unique',
    });
  }
  for (const entry of meta.uniqueWhen) {
    registry.constraints.set(uniqueWhenIndexName(meta, entry), {
      model: meta.name, fields: [...entry.fields, entry.when], kind: 'unique', message: entry.message,
    });
  }
  registry.constraints.set(constraintName(meta.table, ['identifier'], 'uniq'), { model: meta.name, fields: ['identifier'], kind: 'unique' });
  for (const f of meta.fields.values()) {
    if (f instanceof ManyToOneField && f.isStored) {
      registry.constraints.set(constraintName(meta.table, [f.column!], 'fkey'), { model: meta.name, fields: [f.name], kind: 'foreign-key' });
    }
  }
}

/**
 * The partial unique index of a `_unique_when` entry: `uom_category_id_when_is_base_uom_uniq`
 * (the `when` keeps it apart from a `_unique_together` over the same columns).
 */
export function uniqueWhenIndexName(meta: ModelMeta, entry: UniqueWhen): string {
  const column = (name: string) => meta.fields.get(name)!.column!;
  return constraintName(meta.table, [...entry.fields.map(column), 'when', column(entry.when)], 'uniq');
}

/** Deterministic constraint/index names within PostgreSQL's 63-byte identifier limit. */
export function constraintName(table: string, columns: readonly string[], suffix: string): string {
  const full = `${table}_${columns.join('_')}_${suffix}`;
  if (full.length <= 63) return full;
  let h = 0;
  for (const ch of full) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return `${full.slice(0, 50)}_${h.toString(36)}_${suffix}`.slice(0, 63);
}
