/**
 * The menu tree the web client shows (`GET /api/menus`, CONTRACTS C2): every `UiMenu` in
 * `sequence` order whose action opens a model the caller may read (and, when the action names
 * `groups`, whose caller belongs to one of them), and the parents leading to
 * them (a parent with nothing to open under it is left out); names in the caller's language.
 * Menus are read as the platform (they are not anyone's secret): the caller's model rights decide
 * which ones it gets.
 */
import { activeAccess } from '../access/record-access.js';
import { inActionAudience } from './action-groups.js';
import { callerLanguage, translateNames } from '../i18n/translations.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';

export interface MenuNode {
  id: number;
  identifier: string | null;
  name: string;
  sequence: number;
  icon: string | null;
  /** The action it opens: its identifier, or its id (as a string) when it has none; null for a parent only. */
  action: string | null;
  children: MenuNode[];
}

interface MenuRow {
  id: number;
  identifier: string | null;
  name: string;
  sequence: number | null;
  icon: string | null;
  parent: { id: number } | null;
  action: { id: number; identifier: string | null; model: string; groups?: { id: number }[] | null } | null;
}

export async function readableMenus(language: { acceptLanguage?: string | null } = {}): Promise<MenuNode[]> {
  const { registry } = currentEnv();
  if (!registry.has('UiMenu')) return [];
  const access = activeAccess();
  const mayOpen = (model: string) => registry.has(model) && (!access || Boolean(access.rights.get(model)?.has('read')));
  const restrictable = registry.has('WindowAction') && registry.meta('WindowAction').fields.has('groups');
  const rows = await withEnv({ su: true }, () => new QuerySet(registry.meta('UiMenu'))
    .read(['identifier', 'name', 'sequence', 'icon', 'parent.id', 'action.identifier', 'action.model', ...(restrictable ? ['action.groups.id'] : [])])) as unknown as MenuRow[];
  const named = await translateNames('menu', rows, await callerLanguage({ acceptLanguage: language.acceptLanguage ?? null }));

  const nodes = new Map<number, MenuNode & { opens: boolean; parentId: number | null }>();
  for (const row of named) {
    const opens = row.action !== null && mayOpen(row.action.model) && inActionAudience(row.action.groups?.map((g) => g.id));
    nodes.set(row.id, {
      id: row.id,
      identifier: row.identifier ?? null,
      name: row.name,
      sequence: row.sequence ?? 0,
      icon: row.icon || null,
      action: opens ? (row.action!.identifier ?? String(row.action!.id)) : null,
      children: [],
      opens,
      parentId: row.parent?.id ?? null,
    });
  }
  const roots: (MenuNode & { opens: boolean; parentId: number | null })[] = [];
  // Rows come in `sequence, name` order (UiMenu's `_order_by`), so children are appended in order.
  for (const node of nodes.values()) {
    const parent = node.parentId === null ? undefined : nodes.get(node.parentId);
    if (parent) parent.children.push(node);
    else if (node.parentId === null) roots.push(node);
  }
  return prune(roots);
}

/** Keeps the menus that open something or lead to one that does; drops the bookkeeping keys. */
function prune(list: (MenuNode & { opens?: boolean; parentId?: number | null })[]): MenuNode[] {
  const out: MenuNode[] = [];
  for (const node of list) {
    const children = prune(node.children);
    if (!node.opens && !children.length) continue;
    out.push({ id: node.id, identifier: node.identifier, name: node.name, sequence: node.sequence, icon: node.icon, action: node.action, children });
  }
  return out;
}
