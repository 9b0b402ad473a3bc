/**
 * Wizards (`Model._wizards`, CONTRACTS C1): the dialog a client shows to ask for an API method's
 * inputs. The registry binds each declaration once per database — its fields bound like a model's,
 * relational targets resolved — and refuses a mistaken one with a `ModuleError` naming the model
 * and the method, so a module that declares a wizard badly fails its install instead of answering
 * 500s later.
 */
import { ModuleError } from '../errors.js';
import type { Field } from './fields/field.js';
import { FileField, OneToManyField, RelationalField } from './fields/relational-fields.js';
import type { WizardDeclaration } from './model.js';
import type { ModelMeta } from './model-meta.js';
import type { Registry } from './registry.js';

export interface Wizard {
  readonly method: string;
  readonly title: string;
  /**
   * The inputs, bound: each field's `model` is a stand-in named `<Model>.<method>` (what value
   * errors and translations name), relational targets are this database's models.
   */
  readonly fields: ReadonlyMap<string, Field>;
  /** `UiView.arch` nodes; one `field` node per input when the declaration gives none. */
  readonly arch: readonly unknown[];
  /** The static method giving defaults from the context, if any. */
  readonly defaults: string | null;
  /** `<Model>.<method>`: the name translations of the title and labels are filed under. */
  readonly key: string;
}

const FIELD_NAME = /^[a-z][a-z0-9_]*$/;
/** Options that make a field computed or stored: a wizard has no record to compute or store on. */
const RECORD_OPTIONS = ['calculate', 'store', 'setter', 'depends', 'editable'] as const;

/** The wizards `meta`'s class declares, bound in `registry` (whose models are all composed). */
export function bindWizards(registry: Registry, meta: ModelMeta): Map<string, Wizard> {
  const wizards = new Map<string, Wizard>();
  const declared = (meta.cls as { _wizards?: Record<string, WizardDeclaration> })._wizards;
  if (declared === undefined) return wizards;
  if (!isPlainObject(declared)) throw new ModuleError(`${meta.name}._wizards must map API method names to wizard declarations`);
  for (const [method, decl] of Object.entries(declared)) {
    const where = `${meta.name}._wizards.${method}`;
    if (!meta.apiMethods.has(method)) throw new ModuleError(`${where}: '${method}' is not listed in ${meta.name}._api_methods`);
    if (!isPlainObject(decl)) throw new ModuleError(`${where} must be an object {title, fields, arch?, defaults?}`);
    if (typeof decl.title !== 'string' || !decl.title.trim()) throw new ModuleError(`${where}: 'title' must be a non-empty text`);
    if (!isPlainObject(decl.fields)) throw new ModuleError(`${where}: 'fields' must map input names to fields`);
    const key = `${meta.name}.${method}`;
    // Value errors say "field 'x' of SaleOrder.action_apply_discount"; relational fields find the
    // registry (File fields, reference checks) through it like any bound field.
    const standIn: ModelMeta = { ...meta, name: key, verboseName: decl.title, fields: new Map() };
    for (const [name, field] of Object.entries(decl.fields as Record<string, unknown>)) {
      standIn.fields.set(name, bindInput(registry, standIn, name, field, where));
    }
    const arch = decl.arch === undefined ? [...standIn.fields.keys()].map((name) => ({ field: { name } })) : decl.arch;
    checkArch(arch, standIn.fields, where);
    if (decl.defaults !== undefined && (typeof decl.defaults !== 'string' || typeof (meta.cls as unknown as Record<string, unknown>)[decl.defaults] !== 'function')) {
      throw new ModuleError(`${where}: 'defaults' must name a static method of ${meta.name} (got '${String(decl.defaults)}')`);
    }
    wizards.set(method, { method, title: decl.title, fields: standIn.fields, arch, defaults: decl.defaults ?? null, key });
  }
  return wizards;
}

function bindInput(registry: Registry, standIn: ModelMeta, name: string, field: unknown, where: string): Field {
  if (!FIELD_NAME.test(name)) throw new ModuleError(`${where}: '${name}' is not a valid input name (snake_case)`);
  // Duck-typed: a field constructor's result has `bind` and `options` (a class check would fail
  // for add-ons that resolve 'fieldforge' to another copy of the platform).
  const decl = field as Partial<Field> | null;
  if (!decl || typeof decl.bind !== 'function' || !isPlainObject(decl.options)) {
    throw new ModuleError(`${where}: input '${name}' must be a field (fields.Char(), fields.ManyToOne('Contact'), …)`);
  }
  if (decl instanceof OneToManyField || decl instanceof FileField || decl.type === 'OneToMany' || decl.type === 'File') {
    throw new ModuleError(`${where}: input '${name}' cannot be a ${decl.type} (a wizard has no record to own lines or files)`);
  }
  const option = RECORD_OPTIONS.find((o) => (decl.options as Record<string, unknown>)[o] !== undefined);
  if (option) throw new ModuleError(`${where}: input '${name}' cannot take '${option}' (a wizard has no record to compute or store)`);
  const bound = decl.bind(name, standIn) as Field;
  if (bound instanceof RelationalField) {
    const target = registry.models.get(bound.targetName);
    if (!target) throw new ModuleError(`${where}: input '${name}' refers to model '${bound.targetName}', which is not installed (missing dependency?)`);
    bound.target = target;
  }
  return bound;
}

/** Arch nodes as a form view takes them, placing only the wizard's inputs. */
function checkArch(arch: unknown, inputs: ReadonlyMap<string, Field>, where: string): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isPlainObject(node) || Object.keys(node).length !== 1) throw new ModuleError(`${where}: arch nodes are one-key maps (row, column, field)`);
    const [kind, body] = Object.entries(node)[0]!;
    if (kind === 'row') return visit(body);
    if (kind === 'column') return visit((body as { children?: unknown } | null)?.children ?? []);
    if (kind === 'field') {
      const name = (body as { name?: unknown } | null)?.name;
      if (typeof name !== 'string' || !inputs.has(name)) throw new ModuleError(`${where}: arch places '${String(name)}', which is not an input of the wizard`);
      return;
    }
    throw new ModuleError(`${where}: unknown arch node '${kind}'`);
  };
  if (!Array.isArray(arch)) throw new ModuleError(`${where}: 'arch' is a list of nodes`);
  visit(arch);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
