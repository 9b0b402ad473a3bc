/**
 * A Form arch for a model whose action has no Form view: its own fields in declaration order
 * (the name first), short ones in two columns, texts, lines and tags below, bookkeeping left out,
 * and those named in `omit` (a chatter model's thread, which the chatter shows).
 */

/** @typedef {import('../../fields/field-props.js').FieldInfo} FieldInfo */

const BOOKKEEPING = new Set(['id', 'identifier', 'display_name', 'created_date', 'created_by', 'updated_date', 'updated_by']);
const WIDE = new Set(['Text', 'OneToMany', 'ManyToMany', 'Json']);

/**
 * @param {Record<string, FieldInfo>} registry entries with `name`
 * @param {string | null} recName
 * @param {readonly string[]} [omit]
 * @returns {import('./form-layout.js').ArchNode[]}
 */
export function defaultFormArch(registry, recName, omit = []) {
  // Lines are left out too: most OneToMany fields are reverse links (a contact's orders), not lines.
  const fields = Object.values(registry).filter((f) => !BOOKKEEPING.has(f.name) && f.type !== 'OneToMany' && !omit.includes(f.name));
  const ordered = recName && registry[recName] ? [registry[recName], ...fields.filter((f) => f.name !== recName)] : fields;
  const short = ordered.filter((f) => !WIDE.has(f.type));
  const wide = ordered.filter((f) => WIDE.has(f.type));
  const half = Math.ceil(short.length / 2);
  /** @param {FieldInfo[]} list */
  const column = (list) => ({ column: { span: 6, children: list.map((f) => ({ field: { name: f.name } })) } });
  /** @type {import('./form-layout.js').ArchNode[]} */
  const arch = [];
  if (short.length) arch.push({ row: [column(short.slice(0, half)), column(short.slice(half))] });
  for (const f of wide) arch.push({ row: [{ field: { name: f.name } }] });
  return arch;
}
