/**
 * Parameterised SQL fragments that flatten as they are built: `sql\`… ${x} …\`` yields text
 * pieces and bind values, a nested fragment's pieces are spliced in on the spot, identifiers are
 * quoted into the text at once. Compiling is one string concatenation (`$1…$n`), with no tree to
 * visit and no frozen nodes — Kysely's `sql` costs a tenth or more of a request's CPU on the
 * ORM's hot paths (issue 15). The API mirrors Kysely's `sql` (`sql.id`, `sql.table`, `sql.join`,
 * `sql.raw`, `sql.lit`, `sql.ref`) and quotes exactly as its PostgreSQL compiler does, so a
 * statement's text is the same whichever built it.
 *
 * This is THE way to build SQL in FieldForge (issue 26): `src/` and modules use this tag only —
 * module authors get it as `import { sql } from 'fieldforge'` — and Kysely is left to the engines.
 * Values are only ever bind parameters; text comes from the template, from identifiers (quoted)
 * and from `raw` (trusted text only). Interpolating what cannot be a bind value (a Kysely
 * expression, a function, a promise, a symbol, a Map or Set) throws a `TypeError` naming it, where
 * it would otherwise be sent as text such as `{}`. A fragment runs on any `SqlExecutor` (`execute`);
 * it also still works inside Kysely's own `sql` and builders (`toOperationNode`), for the engines.
 */
import { CompiledQuery, RawNode, ValueNode, type OperationNode, type QueryResult } from 'kysely';
import { directRunner, type StatementOptions } from './direct-statements.js';
import type { SqlExecutor } from './sql-executor.js';

const NO_VALUES: readonly unknown[] = Object.freeze([]);

/** `T`: the row type `execute` answers (as Kysely's `sql<T>`); never checked, like Kysely's. */
export class SqlFragment<T = unknown> {
  /** The text, once asked for: one string object, whose hash V8 keeps (statement names are looked up by it). */
  #text: string | undefined = undefined;

  /**
   * `strings.length === values.length + 1`: the statement is strings[0], $1, strings[1], $2, …
   * Never mutated once built.
   */
  constructor(readonly strings: readonly string[], readonly values: readonly unknown[]) {}

  /** The text with `$1…$n` placeholders, in the order of `values`. */
  get text(): string {
    if (this.#text !== undefined) return this.#text;
    const { strings } = this;
    let text = strings[0]!;
    for (let i = 1; i < strings.length; i++) text += `$${i}${strings[i]!}`;
    return (this.#text = text);
  }

  /** The same statement with other values (as many): its text is this one's, not built again. */
  withValues(values: readonly unknown[]): SqlFragment<T> {
    if (values.length !== this.values.length) throw new Error(`expected ${this.values.length} values, got ${values.length}`);
    const fragment = new SqlFragment<T>(this.strings, values);
    fragment.#text = this.text;
    return fragment;
  }

  /** As a Kysely compiled query (the form its executors and `log` option see). */
  compile(): CompiledQuery {
    return CompiledQuery.raw(this.text, this.values as unknown[]);
  }

  /**
   * Runs on the pool, a connection or a transaction, as Kysely's `RawBuilder.execute` would (same
   * rows, same log): straight to its connections when it has a direct runner
   * (`direct-statements.ts`), else through the engine's Kysely executor.
   */
  execute(db: SqlExecutor, options?: StatementOptions): Promise<QueryResult<T>> {
    const runner = directRunner(db);
    if (runner) return runner.run<T>(this.text, this.values, options);
    return db.getExecutor().executeQuery<T>(this.compile() as CompiledQuery<T>);
  }

  /** Kysely interop: a fragment inside Kysely's `sql` or a query builder is the same raw SQL. */
  toOperationNode(): OperationNode {
    return RawNode.create([...this.strings], this.values.map((v) => ValueNode.create(v)));
  }
}

/** The template tag: interpolated fragments are spliced in, anything else is a bind value. */
export const sql = Object.assign(template, { id, table, ref, raw, lit, join, empty: new SqlFragment([''], NO_VALUES) });

function template<T = unknown>(strings: TemplateStringsArray | readonly string[], ...args: unknown[]): SqlFragment<T> {
  if (!args.length) return new SqlFragment<T>([strings[0]!], NO_VALUES);
  const outStrings: string[] = [strings[0]!];
  const outValues: unknown[] = [];
  let last = 0;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg instanceof SqlFragment) {
      const s = arg.strings;
      const v = arg.values;
      outStrings[last] += s[0]!;
      for (let k = 0; k < v.length; k++) {
        outValues.push(v[k]);
        outStrings.push(s[k + 1]!);
      }
      last = outStrings.length - 1;
      outStrings[last] += strings[i + 1]!;
    } else {
      outValues.push(typeof arg === 'object' || typeof arg === 'function' || typeof arg === 'symbol' ? bindable(arg, strings, i) : arg);
      outStrings.push(strings[i + 1]!);
      last++;
    }
  }
  return new SqlFragment<T>(outStrings, outValues);
}

/**
 * An object, function or symbol as a bind value, or a `TypeError` saying what it is and where: pg
 * would send a Kysely expression or a Map as JSON text (`{}`), a promise as `{}`, a function or a
 * symbol as its source text — never as SQL, and never what was meant.
 */
function bindable(value: unknown, strings: readonly string[], index: number): unknown {
  const refused = refusal(value);
  if (refused === null) return value;
  const before = strings[index]!.slice(-40).replace(/\s+/g, ' ');
  throw new TypeError(`sql: value ${index + 1} (after "${before}") is ${refused}, which cannot be a bind parameter`);
}

function refusal(value: unknown): string | null {
  if (typeof value === 'function') return 'a function (call it first)';
  if (typeof value === 'symbol') return 'a symbol';
  if (value === null || Array.isArray(value)) return null;
  const object = value as { toOperationNode?: unknown; then?: unknown };
  if (typeof object.toOperationNode === 'function') {
    // A fragment of this module was spliced before it got here: this one comes from another copy of it.
    return (value as object).constructor?.name === 'SqlFragment'
      ? 'a fragment of another copy of src/db/sql-fragment.ts (fieldforge loaded twice)'
      : 'a Kysely expression (build it with the sql tag of src/db, `fieldforge`\'s `sql`)';
  }
  if (typeof object.then === 'function') return 'a promise (a missing await?)';
  if (value instanceof Map || value instanceof Set) return `a ${value instanceof Map ? 'Map' : 'Set'} (it would be sent as {})`;
  return null;
}

/** `"name"` with embedded quotes doubled, as Kysely's PostgreSQL compiler does. */
export function quoteIdentifier(name: string): string {
  return `"${name.includes('"') ? name.replace(/"/g, '""') : name}"`;
}

/** Quoted identifiers joined by dots: `id('t0', 'name')` → `"t0"."name"` (a part is never split). */
function id(...parts: string[]): SqlFragment {
  let text = quoteIdentifier(parts[0]!);
  for (let i = 1; i < parts.length; i++) text += `.${quoteIdentifier(parts[i]!)}`;
  return new SqlFragment([text], NO_VALUES);
}

/** A table, optionally schema-qualified (`schema.table`), as Kysely's `sql.table` reads it. */
function table(name: string): SqlFragment {
  if (!name.includes('.')) return new SqlFragment([quoteIdentifier(name)], NO_VALUES);
  const [schema, tableName] = name.split('.').map((s) => s.trim());
  return new SqlFragment([`${quoteIdentifier(schema!)}.${quoteIdentifier(tableName!)}`], NO_VALUES);
}

/** A column reference, `column`, `table.column` or `schema.table.column`, as Kysely's `sql.ref` reads it. */
function ref(reference: string): SqlFragment {
  if (!reference.includes('.')) return new SqlFragment([quoteIdentifier(reference)], NO_VALUES);
  const parts = reference.split('.').map((s) => s.trim());
  if (parts.length > 3) throw new Error(`invalid column reference ${reference}`);
  return new SqlFragment([parts.map(quoteIdentifier).join('.')], NO_VALUES);
}

/** Trusted SQL text as is (keywords, type names from declarations; never input). */
function raw(text: string): SqlFragment {
  return new SqlFragment([text], NO_VALUES);
}

/**
 * A literal in the text rather than a parameter: a string quoted with `'` doubled (PostgreSQL's
 * standard_conforming_strings, as Kysely's `sql.lit`), numbers and booleans as written, null as
 * `null`, a date as its ISO string.
 */
function lit(value: string | number | bigint | boolean | null | Date): SqlFragment {
  return new SqlFragment([literal(value)], NO_VALUES);
}

function literal(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/'/g, "''")}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value.toString();
  if (value === null) return 'null';
  if (value instanceof Date) return literal(value.toISOString());
  throw new Error(`invalid immediate value ${String(value)}`);
}

const COMMA = new SqlFragment([', '], NO_VALUES);

/** Items separated by `separator` (`, ` by default); an item that is not a fragment is a bind value. */
function join(items: readonly unknown[], separator: SqlFragment = COMMA): SqlFragment {
  if (!items.length) return sql.empty;
  const strings = new Array<string>(items.length + 1).fill(separator.strings[0]!);
  strings[0] = '';
  strings[items.length] = '';
  // A separator holding values (never in practice) goes through the general path.
  if (separator.values.length) {
    const parts: unknown[] = [];
    items.forEach((item, i) => (i ? parts.push(separator, item) : parts.push(item)));
    return template(new Array<string>(parts.length + 1).fill(''), ...parts);
  }
  return template(strings, ...items);
}
