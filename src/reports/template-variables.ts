/**
 * Which data a report template reads, found before rendering so that the whole batch of records
 * is read at once (`report-data.ts`): every variable path the template mentions — outputs, tag
 * arguments, filter arguments, partials — with loop variables, `assign`ed names and partial
 * parameters followed back to what they stand for:
 *
 * ```liquid
 * {% for line in record.order_lines %}{{ line.product.name }}{% endfor %}   → record.order_lines.product.name
 * {% assign c = record.company %}{{ c.name }}                                 → record.company.name
 * ```
 *
 * LiquidJS's own static analysis lists the variables; it does not follow `for` and `assign`
 * aliases to their source, which is what this adds. The result may hold more paths than a
 * render uses (a name assigned twice stands for both sources) — reading a little more is
 * harmless, missing a path is not.
 */
import type { Liquid, Template } from 'liquidjs';
import { liquidJs } from './liquidjs.js';

/** A variable's path: `['record', 'customer', 'name']`. */
export type Segments = readonly string[];

/** Deepest chain of aliases followed (`assign a = b`, `assign b = c`, …); a cycle stops here. */
const MAX_ALIAS_DEPTH = 8;

/**
 * Every variable path of `templates` rooted at one of `roots`, aliases resolved, without
 * duplicates. `liquid` is an engine made from the module `liquidJs.load()` loaded (`liquidjs.ts`).
 */
export function templateVariables(liquid: Liquid, templates: readonly Template[], roots: readonly string[]): Segments[] {
  const aliases = new Map<string, Segments[]>();
  for (const node of walk(templates)) {
    for (const [name, source] of aliasesOf(liquid, node)) {
      const list = aliases.get(name) ?? [];
      list.push(source);
      aliases.set(name, list);
    }
  }
  const wanted = new Set(roots);
  const seen = new Set<string>();
  const out: Segments[] = [];
  for (const variable of allVariables(liquid, templates)) {
    for (const path of expand(variable, aliases, 0)) {
      const key = JSON.stringify(path);
      if (!wanted.has(path[0]!) || seen.has(key)) continue;
      seen.add(key);
      out.push(path);
    }
  }
  return out;
}

/** Every node of the templates, partials (`render`, `include`) included. */
function* walk(templates: readonly Template[], depth = 0): Generator<Template> {
  const { toValueSync } = liquidJs.get();
  for (const node of templates) {
    yield node;
    const parent = node as Template & { children?: (partials: boolean, sync: boolean) => Generator<unknown, Template[]> };
    // Partials nest; a partial that renders itself would never end.
    if (parent.children && depth < 32) yield* walk(toValueSync(parent.children(true, true)) as Template[], depth + 1);
  }
}

/** The names a node binds, each with the path of what it binds them to. */
function aliasesOf(liquid: Liquid, node: Template): [string, Segments][] {
  // Loaded, since `liquid` exists (`liquidjs.ts`).
  const { AssignTag, ForTag, IncludeTag, RenderTag, TablerowTag } = liquidJs.get();
  if (node instanceof ForTag || node instanceof TablerowTag) {
    // `for line in record.order_lines`: the collection is the tag's first argument.
    const source = firstVariable(liquid, node);
    return source ? [[(node as unknown as { variable: string }).variable, source]] : [];
  }
  if (node instanceof AssignTag) {
    const source = firstVariable(liquid, node);
    return source ? [[(node as unknown as { key: string }).key, source]] : [];
  }
  if (node instanceof RenderTag || node instanceof IncludeTag) {
    // `render 'line', line: l` and `render 'line' with l as line` / `for l as line`.
    const out: [string, Segments][] = [];
    const hash = (node as unknown as { hash?: { hash?: Record<string, unknown> } }).hash?.hash ?? {};
    for (const [name, token] of Object.entries(hash)) {
      const source = token ? firstVariable(liquid, { arguments: function* () { yield token; } }) : null;
      if (source) out.push([name, source]);
    }
    const scope = (node as unknown as { partialScope?: () => { scope: (string | [string, unknown])[] } | undefined }).partialScope?.();
    for (const entry of scope?.scope ?? []) {
      if (typeof entry === 'string') continue;
      const [name, token] = entry;
      const source = firstVariable(liquid, { arguments: function* () { yield token; } });
      if (source) out.push([name, source]);
    }
    return out;
  }
  return [];
}

/** The first variable among a node's arguments (LiquidJS's own analysis, on that node alone). */
function firstVariable(liquid: Liquid, node: { arguments?: () => Iterable<unknown> }): Segments | null {
  if (typeof node.arguments !== 'function') return null;
  const probe = { arguments: () => node.arguments!() } as unknown as Template;
  const { variables } = liquid.analyzeSync([probe], { partials: false });
  for (const list of Object.values(variables)) {
    const segments = plainSegments(list[0]?.segments ?? []);
    if (segments.length) return segments;
  }
  return null;
}

/** Every variable the templates mention (including loop variables, before resolution). */
function* allVariables(liquid: Liquid, templates: readonly Template[]): Generator<Segments> {
  const { variables } = liquid.analyzeSync([...templates], { partials: true });
  for (const list of Object.values(variables)) {
    for (const variable of list) {
      const segments = plainSegments(variable.segments);
      if (segments.length) yield segments;
    }
  }
}

/**
 * The leading literal segments of a path: `record.lines[i].name` is known only up to `lines`
 * (what `i` is depends on the render), which still reads every line.
 */
function plainSegments(segments: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const s of segments) {
    if (typeof s === 'string') out.push(s);
    else if (typeof s === 'number') out.push(String(s));
    else break;
  }
  return out;
}

/** `path` with its first segment replaced by what that name is bound to, recursively. */
function expand(path: Segments, aliases: ReadonlyMap<string, Segments[]>, depth: number): Segments[] {
  const sources = aliases.get(path[0]!);
  if (!sources || depth >= MAX_ALIAS_DEPTH) return [path];
  return sources.flatMap((source) => expand([...source, ...path.slice(1)], aliases, depth + 1));
}
