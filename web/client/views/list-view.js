/**
 * The list view of a window action (CONTRACTS C2 "List"): columns from the `List` arch (or the
 * registry), sort by a header click, pages of 80 with the total, the search box (`name_search`)
 * and field filters, grouping with counts and sums, and actions on a selection that may reach
 * beyond the page ("select all N" sends a selection object, not ids).
 *
 * What the list shows lives in the URL's hash (page, order, search, group, archived, filter), so
 * a reload or a shared link reopens it. One page is read at a time (`list/use-list-page.js`);
 * the view renders from the answer in one pass (the `ff:list-render` performance measure records
 * how long that took).
 *
 * Export (the whole match from the toolbar, the ticked rows from the selection bar) and Import
 * open their dialogs (`list/use-list-dialogs.js`, loaded when first used); models with a
 * `sequence` field get drag handles and Alt+arrow moves (`list/use-row-move.js`).
 */
import { html } from '../../lib/html.js';
import { useMemo, useState } from 'preact/hooks';
import { useReloadAction } from '../realtime/live.js';
import { useGroupViews } from './list/group-views.js';
import { filterableFields, groupableFields, listColumns, readPaths } from './list/list-columns.js';
import { ListDialogs } from './list/list-dialogs.js';
import { ListEmpty } from './list/list-empty.js';
import { ListFilters } from './list/list-filters.js';
import { ListPager } from './list/list-pager.js';
import { GROUP_PAGE_SIZE, PAGE_SIZE, defaultOrderEntry, groupCondition, groupRecordsQuery, selectionObject } from './list/list-query.js';
import { stateKey } from './list/list-route.js';
import { useListSelection } from './list/list-selection.js';
import { ListTable } from './list/list-table.js';
import { ListToolbar } from './list/list-toolbar.js';
import { reorderability } from './list/row-reorder.js';
import { selectionActions } from './list/selection-actions.js';
import { SelectionBar } from './list/selection-bar.js';
import { useUniqueId } from './list/unique-id.js';
import { useBusy } from './list/use-busy.js';
import { useGroupRecords } from './list/use-group-records.js';
import { useLanguageFormats } from './list/use-language-formats.js';
import { useListDialogs } from './list/use-list-dialogs.js';
import { useListPage } from './list/use-list-page.js';
import { useListState } from './list/use-list-state.js';
import { useRowMove } from './list/use-row-move.js';

/**
 * @typedef {import('./list/list-route.js').ListState} ListState
 * @typedef {import('./list/list-columns.js').Registry} Registry
 * @typedef {{id?: number, identifier: string | null, name: string, model: string, modes?: string[], default_view?: string, client_view?: string | null}} WindowAction
 * @typedef {{model?: string, label?: string, order_by?: string[], archivable?: boolean, rec_name?: string | null, api_methods?: string[],
 *   wizards?: {method: string, title: string}[], reports?: {id: number, identifier: string | null, name: string, format: string}[],
 *   create?: boolean, write?: boolean, unlink?: boolean}} ModelInfo
 * @typedef {{user?: {lang?: string | null}, lang?: string | null}} Session
 */

/**
 * @param {{
 *   action: WindowAction, views?: {List?: unknown, Form?: unknown}, registry: Registry, modelInfo?: ModelInfo | null,
 *   route: Record<string, string | undefined>, navigate: (params: Record<string, string>, options?: {replace?: boolean}) => unknown,
 *   session?: Session | null,
 * }} props
 */
export function ListView({ action, views, registry, modelInfo, route, navigate, session }) {
  const model = action.model;
  const lang = session?.lang ?? session?.user?.lang ?? 'en';
  const info = modelInfo ?? {};
  const archivable = Boolean(info.archivable ?? registry.active?.type === 'Boolean');
  const defaultOrder = info.order_by ?? [];
  const title = action.name || info.label || model;
  // The address names the action as it was opened (its identifier, or its id when it has none).
  const actionRef = route.action ?? action.identifier ?? String(action.id);
  const filtersPanelId = useUniqueId('ff-list');

  const columns = useMemo(
    () => listColumns(/** @type {import('./list/list-columns.js').ListArchNode[] | undefined} */ (views?.List), registry, info),
    [views, registry, info.rec_name],
  );
  const groupFields = useMemo(() => groupableFields(registry, columns), [registry, columns]);
  const filterFields = useMemo(() => filterableFields(registry), [registry]);

  // A new query: nothing ticked, no group opened (`selection` and `groupRecords` are below).
  const { state, update } = useListState({ route, actionRef, navigate, onNewQuery: () => { selection.clear(); groupRecords.reset(); } });
  const [filtersOpen, setFiltersOpen] = useState(false);
  const { busy, run } = useBusy();

  const fields = useMemo(() => readPaths(columns, { archived: archivable && state.archived }), [columns, archivable, state.archived]);
  const groupField = state.group && registry[state.group] ? { ...registry[state.group], name: state.group } : null;
  const grouped = Boolean(groupField);
  const effective = grouped ? state : { ...state, group: null };
  const query = { state: effective, registry, archivable, defaultOrder };

  const groupRecords = useGroupRecords(model, (condition, page) => groupRecordsQuery({ ...query, fields, groupFilter: condition, page }));

  useLanguageFormats(lang);

  const page = useListPage({ ...query, model, queryKey: stateKey(effective), grouped, columns, fields, onPastEnd: (n) => update({ page: n }) });
  const { data } = page;
  const groupViews = useGroupViews(data.groups, groupRecords.groups, groupField, lang);
  const visibleIds = data.records ? data.records.map((r) => r.id) : (groupViews ?? []).flatMap((g) => (g.expanded ? g.records.map((r) => r.id) : []));
  const selection = useListSelection(visibleIds, data.total);

  /** After an action: nothing ticked, the page and the opened groups read again. */
  const refresh = () => {
    selection.clear();
    page.reload();
    groupRecords.refresh((key) => {
      const group = data.groups?.find((g) => g.key === key);
      return group && effective.group ? groupCondition(effective.group, group.value) : null;
    });
  };

  // A `reload` client action from the server (CONTRACTS C4): the page and opened groups read again.
  useReloadAction(refresh);

  // The order the rows are in: the chosen one, else the model's first default entry (shown on its column too).
  const shownOrder = state.order ?? defaultOrderEntry(defaultOrder);

  /** @param {import('./list/list-columns.js').Column} column */
  const sort = (column) => {
    const [field, dir] = shownOrder ? shownOrder.split(' ') : [null, null];
    update({ order: `${column.name} ${field === column.name && dir === 'ASC' ? 'DESC' : 'ASC'}` });
  };

  const facts = {
    model, label: info.label ?? title, archivable, create: info.create !== false, write: info.write !== false, unlink: info.unlink !== false,
    wizards: info.wizards ?? [], reports: info.reports ?? [],
  };
  const currentSelection = () => selectionObject(selection.plain(), query);
  const dialogs = useListDialogs({ ...query, selection, visibleIds, total: data.total, currentSelection });

  const actions = selection.count
    ? selectionActions({ facts, count: selection.count, lang, selection: currentSelection, archivedShown: archivable && state.archived, run, done: refresh,
        openWizard: dialogs.openWizard, openExport: () => dialogs.openExport(true) })
    : [];

  const canReorder = reorderability({ registry, defaultOrder, state: effective, grouped, canWrite: facts.write });
  const move = useRowMove({ ...query, model, records: data.records, busy, enabled: Boolean(canReorder?.enabled), run,
    showRecords: (records) => page.setData((current) => ({ ...current, records })) });

  // Focus goes back to the button that opened the builder, not to the page's start.
  const closeFilters = () => {
    setFiltersOpen(false);
    document.getElementById(`${filtersPanelId}-button`)?.focus();
  };

  /** The group of a key, and what its records are: the table's opening and "Load more" of a group. */
  const inGroup = (/** @type {string} */ key, /** @type {(key: string, condition: string) => void} */ act) => {
    const group = data.groups?.find((g) => g.key === key);
    if (group && effective.group) act(key, groupCondition(effective.group, group.value));
  };

  const pager = html`<${ListPager} page=${state.page} pageSize=${grouped ? GROUP_PAGE_SIZE : PAGE_SIZE} shown=${data.records?.length ?? data.groups?.length ?? 0}
    total=${data.total} grouped=${grouped} hasNext=${data.hasNext} lang=${lang} onPage=${(/** @type {number} */ n) => update({ page: n })} />`;

  return html`<section class="ff-list" aria-label=${title}>
    <${ListToolbar} title=${title} canCreate=${facts.create} onNew=${() => navigate({ action: actionRef, view: 'form' })}
      search=${state.search} onSearch=${(/** @type {string} */ search) => update({ search })}
      filtersOpen=${filtersOpen} filterCount=${state.filters.length} onToggleFilters=${() => setFiltersOpen(!filtersOpen)}
      groupFields=${groupFields} group=${grouped ? state.group : null} onGroup=${(/** @type {string | null} */ group) => update({ group })}
      archivable=${archivable} archived=${state.archived} onArchived=${(/** @type {boolean} */ archived) => update({ archived })}
      pager=${pager} filtersPanelId=${filtersPanelId} onExport=${() => dialogs.openExport(false)} onImport=${facts.create ? dialogs.openImport : null}
      onDefaultOrder=${canReorder && !canReorder.enabled ? () => update({ order: null }) : null} />
    <p class="ff-visually-hidden" role="status">${move.announcement}</p>
    <${ListFilters} panelId=${filtersPanelId} open=${filtersOpen} onClose=${closeFilters} fields=${filterFields} initial=${columns[0]?.name}
      filters=${state.filters} registry=${registry} lang=${lang} onChange=${(/** @type {any[]} */ filters) => update({ filters })} />
    ${selection.count
      ? html`<${SelectionBar} count=${selection.count} total=${data.total} allMatching=${selection.selection.allMatching}
          pageAllSelected=${selection.pageState === 'all'} onSelectAll=${selection.selectAllMatching} onClear=${selection.clear}
          actions=${actions} busy=${busy} lang=${lang} />`
      : null}
    ${page.error
      ? html`<div class="ff-list-error" role="alert">
          <p>${page.error}</p>
          <button type="button" class="ff-button" onClick=${page.reload}>Retry</button>
        </div>`
      : null}
    <div class=${`ff-list-scroll${page.loading ? ' ff-list-loading' : ''}`} aria-busy=${page.loading ? 'true' : 'false'}>
      ${data.records || data.groups
        ? html`<${ListTable} columns=${columns} records=${data.records} groups=${groupViews} groupLabel=${groupField?.label ?? null}
            order=${shownOrder} onSort=${sort} isSelected=${selection.isSelected} onToggle=${selection.toggle}
            pageState=${selection.pageState} onTogglePage=${selection.togglePage}
            onOpen=${(/** @type {number} */ id) => navigate({ action: actionRef, view: 'form', id: String(id) })}
            lang=${lang} aggregates=${data.aggregates} currencySums=${data.currencySums ?? {}}
            onToggleGroup=${(/** @type {string} */ key) => inGroup(key, groupRecords.toggle)}
            onMoreInGroup=${(/** @type {string} */ key) => inGroup(key, groupRecords.more)}
            empty=${html`<${ListEmpty} title=${title} searching=${Boolean(state.search.trim() || state.filters.length)} canCreate=${facts.create}
              onClear=${() => update({ search: '', filters: [] })} />`}
            caption=${title} reorder=${canReorder ? { ...canReorder, onMove: move.moveRow } : null} />`
        : !page.error
          ? html`<p class="ff-list-placeholder" role="status">Loading…</p>`
          : null}
    </div>
    <${ListDialogs} dialogs=${dialogs} model=${model} title=${title} registry=${registry} columns=${columns} lang=${lang} onChanged=${refresh} />
  </section>`;
}
