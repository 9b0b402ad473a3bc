/**
 * Ordering entries (`deadline ASC`, `stage__sequence DESC`, `stage.name ASC NULLS LAST`) → ORDER
 * BY items. ManyToOne traversals join through the scope; ordering by a ManyToOne itself orders
 * by the target's own default order. The primary key ends the list (unless it is already in it) so pages are stable.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import { QuerySyntaxError } from '../../errors.js';
import { ManyToOneField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';
import type { QueryScope } from './query-scope.js';
import { requireField } from './resolve-path.js';

type Sql = SqlFragment;
const ENTRY = /^\s*([A-Za-z_][A-Za-z0-9_]*(?:(?:__|\.)[A-Za-z_][A-Za-z0-9_]*)*)(?:\s+(ASC|DESC))?(?:\s+NULLS\s+(FIRST|LAST))?\s*$/i;
const MAX_ENTRIES = 20;

export interface OrderEntry {
  path: string[];
  descending: boolean;
  nulls: 'FIRST' | 'LAST' | null;
}

export function parseOrderEntry(entry: unknown): OrderEntry {
  if (typeof entry !== 'string') throw new QuerySyntaxError(`Ordering entries are strings like 'name ASC'`);
  const m = ENTRY.exec(entry);
  if (!m) throw new QuerySyntaxError(`Invalid ordering entry '${entry.slice(0, 60)}': expected '<field> ASC|DESC'`);
  return {
    path: m[1]!.split(/__|\./),
    descending: m[2]?.toUpperCase() === 'DESC',
    nulls: (m[3]?.toUpperCase() as 'FIRST' | 'LAST' | undefined) ?? null,
  };
}

export function compileOrder(entries: readonly string[], scope: QueryScope): Sql[] {
  if (entries.length > MAX_ENTRIES) throw new QuerySyntaxError(`At most ${MAX_ENTRIES} ordering entries`);
  const items: Sql[] = [];
  let byId = false;
  for (const raw of entries) {
    const entry = parseOrderEntry(raw);
    items.push(...orderItems(entry, scope, scope.alias, scope.meta, 0));
    byId ||= entry.path.length === 1 && entry.path[0] === 'id';
  }
  if (!byId) items.push(sql`${sql.id(scope.alias, 'id')} ASC`);
  return items;
}

function orderItems(entry: OrderEntry, scope: QueryScope, alias: string, meta: ModelMeta, depth: number): Sql[] {
  let f = requireField(meta, entry.path[0]!, scope.publicOnly);
  const dir = entry.descending ? sql`DESC` : sql`ASC`;
  const nulls = entry.nulls === 'FIRST' ? sql` NULLS FIRST` : entry.nulls === 'LAST' ? sql` NULLS LAST` : sql``;
  for (const [k, seg] of entry.path.slice(1).entries()) {
    if (!(f instanceof ManyToOneField)) {
      throw new QuerySyntaxError(`Cannot order by '${entry.path.join('__')}': '${f.name}' is not a ManyToOne`);
    }
    // `<many2one>__id` last is the foreign key itself: ordering by it needs no join, and an index
    // on the key (a feed's `(contact_id, message_id DESC)`) then serves the ORDER BY.
    if (seg === 'id' && k === entry.path.length - 2 && f.column) return [sql`${sql.id(alias, f.column)} ${dir}${nulls}`];
    alias = scope.joinManyToOne(alias, f);
    meta = f.target;
    f = requireField(meta, seg, scope.publicOnly);
  }
  if (f instanceof ManyToOneField && depth < 2) {
    // Order by the related record's own default order, as the person sorting a column expects.
    const targetAlias = scope.joinManyToOne(alias, f);
    return f.target.orderBy.flatMap((e) => {
      const inner = parseOrderEntry(e);
      const flip = entry.descending ? !inner.descending : inner.descending;
      return orderItems({ ...inner, descending: flip, nulls: entry.nulls ?? inner.nulls }, scope, targetAlias, f.target, depth + 1);
    });
  }
  const column = f.name === 'display_name' && meta.recName ? meta.fields.get(meta.recName)!.column : f.column;
  if (!column) throw new QuerySyntaxError(`Cannot order by '${entry.path.join('__')}': it is not stored`);
  return [sql`${sql.id(alias, column)} ${dir}${nulls}`];
}
