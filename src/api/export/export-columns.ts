/**
 * The columns of an export: each requested path (`customer/name`, `order_lines/product`) checked
 * against the model, with what must be read for it and how its cells are laid out.
 *
 * - A path through a to-many field at its first step (`order_lines/product`, `tags/name`, or a
 *   bare `order_lines`) is a *line column*: the record's lines go one per row, the first on the
 *   record's own row (CONTRACTS C3). Columns through the same to-many share those rows. A to-many
 *   deeper in a path can only be its last step (`customer/tags`, `order_lines/taxes`), shown as a
 *   comma-separated list in one cell: lines of lines have no layout an import could read back.
 * - A relation at the end of a path is read with its target's `display_name` *and* `identifier`:
 *   asking for more than a bare link makes the read go through the target's record rules, so a
 *   related record the caller may not read is an empty cell (a bare link would show its name).
 * - A path passing into a model the caller has no right to read is a column of empty cells, not
 *   a 403: the rest of the export is still the caller's to have.
 * - Monetary amounts also read their currency's `rounding` (the cell's decimals).
 */
import { BadRequest } from '../../errors.js';
import type { Field } from '../../orm/fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField, RelationalField } from '../../orm/fields/relational-fields.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { mayReadModel } from '../../orm/read/read-records.js';

/** Most columns one export may have: wide enough for any real sheet, bounded so one query stays plannable. */
export const MAX_EXPORT_COLUMNS = 100;
/** Steps of one path (the read adds one more for a relation's name, within the ORM's six). */
const MAX_PATH_STEPS = 5;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Types that have no cell: raw bytes and attachments. */
const UNEXPORTABLE = new Set(['Binary', 'File']);
/** Generic columns left out of the default export (`id` means "this database's record" to an import). */
const AUDIT = new Set(['id', 'display_name', 'identifier', 'created_date', 'created_by', 'updated_date', 'updated_by']);

export interface ExportColumn {
  /** The path as sent (`customer/name`). */
  readonly path: string;
  /** The fields along the path, first to last. */
  readonly steps: readonly Field[];
  /** The to-many field whose lines this column follows (its first step), or null. */
  readonly lines: OneToManyField | ManyToManyField | null;
  /** False when the path passes into a model the caller may not read: every cell is empty. */
  readonly readable: boolean;
  /** Dotted paths the ORM reads for this column. */
  readonly readPaths: readonly string[];
  /** The Monetary leaf's currency field (a sibling ManyToOne), when there is one to read. */
  readonly currencyField: string | null;
}

/** The columns of `paths` (or of the model's default export), each checked; a bad path → 400 naming it. */
export function exportColumns(meta: ModelMeta, paths: readonly string[] | undefined, importCompatible: boolean): ExportColumn[] {
  const wanted = paths ?? defaultExportPaths(meta, importCompatible);
  if (wanted.length > MAX_EXPORT_COLUMNS) throw new BadRequest(`An export has at most ${MAX_EXPORT_COLUMNS} columns; ${wanted.length} were asked for`);
  const columns = wanted.map((path) => exportColumn(meta, path));
  // An import tells a line row by its blank first cell: the first column must be the record's own.
  if (importCompatible && columns[0]?.lines) {
    throw new BadRequest(`The first column of an import-compatible export must be a field of ${meta.name} itself, not of its lines ('${columns[0].path}')`);
  }
  return columns;
}

function exportColumn(meta: ModelMeta, path: string): ExportColumn {
  const names = path.split('/');
  const bad = (why: string) => new BadRequest(`Field path '${path.slice(0, 120)}': ${why}`);
  if (names.length > MAX_PATH_STEPS) throw bad(`deeper than ${MAX_PATH_STEPS} steps`);
  const steps: Field[] = [];
  let model = meta;
  let readable = true;
  let lines: OneToManyField | ManyToManyField | null = null;
  names.forEach((name, i) => {
    const field = NAME_RE.test(name) ? model.fields.get(name) : undefined;
    if (!field || field.options.internal) throw bad(`unknown field '${name.slice(0, 60)}' on model ${model.name}`);
    if (UNEXPORTABLE.has(field.type)) throw bad(`${field.type} fields are not exported`);
    const last = i === names.length - 1;
    const toMany = field instanceof OneToManyField || field instanceof ManyToManyField;
    if (!last && !(field instanceof RelationalField)) throw bad(`'${name}' is not a relation, so '${names.slice(i + 1).join('/')}' cannot be read through it`);
    if (toMany && i === 0 && (field instanceof OneToManyField || !last)) lines = field;
    else if (toMany && !last) throw bad(`'${name}' is a to-many field inside another relation; only a path's first step may open lines`);
    steps.push(field);
    if (field instanceof RelationalField) {
      model = field.target;
      if (!mayReadModel(model)) readable = false;
    }
  });
  const leaf = steps[steps.length - 1]!;
  const dotted = names.join('.');
  let readPaths: string[] = [dotted];
  let currencyField: string | null = null;
  if (leaf instanceof RelationalField) {
    readPaths = [`${dotted}.display_name`, `${dotted}.identifier`];
  } else if (leaf.type === 'Monetary') {
    const owner = steps.length > 1 ? (steps[steps.length - 2] as RelationalField).target : meta;
    const name = (leaf.options as { currency_field?: string }).currency_field;
    const currency = name ? owner.fields.get(name) : undefined;
    if (currency instanceof ManyToOneField && mayReadModel(currency.target)) {
      currencyField = name!;
      readPaths = [dotted, [...names.slice(0, -1), name!, 'rounding'].join('.')];
    }
  }
  return { path, steps, lines, readable, readPaths: readable ? readPaths : [], currencyField };
}

/**
 * Without `fields`: every stored field a person would read or an import could write, the record's
 * name first. Default export: stored, non-binary fields of the model itself, ManyToMany as name
 * lists; import-compatible: only settable ones, with `identifier` last so that a re-import updates
 * instead of duplicating (no to-many lines either way: those are asked for by path).
 */
export function defaultExportPaths(meta: ModelMeta, importCompatible: boolean): string[] {
  const chosen = [...meta.fields.values()].filter((f) =>
    (f.isStored || f instanceof ManyToManyField) && !f.options.internal && !UNEXPORTABLE.has(f.type) && !(f instanceof OneToManyField) && !AUDIT.has(f.name)
    && (!importCompatible || f.isSettable));
  const names = chosen.map((f) => f.name);
  const first = meta.recName && names.includes(meta.recName) ? [meta.recName] : [];
  const rest = names.filter((n) => n !== meta.recName);
  return [...first, ...rest, ...(importCompatible ? ['identifier'] : [])].slice(0, MAX_EXPORT_COLUMNS);
}
