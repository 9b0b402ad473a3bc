/**
 * The list view of a window action (CONTRACTS C2 "List"): columns from the `List` arch (or the
 * registry), sort by a header click, pages of 80 with the total, the search box (`name_search`)
 * and field filters, grouping with counts and sums, and actions on a selection that may reach
 * beyond the page ("select all N" sends a selection object, not ids).
 *
 * What the list shows lives in the URL's hash (page, order, search, group, archived, filter), so
 * a reload or a shared link reopens it. One page is read at a time; the view renders from the
 * answer in one pass (the `ff:list-render` performance measure records how long that took).
 *
 * Export (the whole match from the toolbar, the ticked rows from the selection bar) and Import
 * open their dialogs (`../exchange/`, loaded when first used); models with a `sequence` field
 * get drag handles and Alt+arrow moves (`list/row-reorder.js`).
 */
import { html } from '../../lib/html.js';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { formatValue, loadLanguage } from '../format.js';
import { FilterBuilder, FilterChips } from './list/filter-builder.js';
import { filterableFields, groupableFields, listColumns, readPaths } from './list/list-columns.js';
import { ListPager } from './list/list-pager.js';
import { GROUP_PAGE_SIZE, PAGE_SIZE, groupCondition, groupRecordsQuery, orderOf, pageQuery, searchTerms, selectionObject, stateFilter } from './list/list-query.js';
import { footerCurrencies, groupCurrencies } from './list/footer-currencies.js';
import { listRouteParams, parseListRoute, routeKey, stateKey } from './list/list-route.js';
import { useListSelection } from './list/list-selection.js';
import { ListTable } from './list/list-table.js';
import { ListToolbar } from './list/list-toolbar.js';
import { moveRecord, reorderability } from './list/row-reorder.js';
import { selectionActions } from './list/selection-actions.js';
import { SelectionBar } from './list/selection-bar.js';
import { useUniqueId } from './list/unique-id.js';
import { useGroupRecords } from './list/use-group-records.js';
import { useReloadAction } from '../realtime/live.js';

/**
 * @typedef {import('./list/list-route.js').ListState} ListState
 * @typedef {import('./list/list-row.js').ListRecord} ListRecord
 * @typedef {import('./list/list-table.js').GroupView} GroupView
 * @typedef {import('./list/list-columns.js').Registry} Registry
 * @typedef {{id?: number, identifier: string | null, name: string, model: string, modes?: string[], default_view?: string, client_view?: string | null}} WindowAction
 * @typedef {{model?: string, label?: string, order_by?: string[], archivable?: boolean, rec_name?: string | null, api_methods?: string[],
 *   wizards?: {method: string, title: string}[], reports?: {id: number, identifier: string | null, name: string, format: string}[],
 *   create?: boolean, write?: boolean, unlink?: boolean}} ModelInfo
 * @typedef {{user?: {lang?: string | null}, lang?: string | null}} Session
 * @typedef {{records: ListRecord[] | null, groups: {key: string, value: unknown, count: number, aggregates: Record<string, number | null>,
 *   currencySums?: Record<string, import('./list/footer-currencies.js').CurrencySum[]>}[] | null,
 *   total: number | null, aggregates: Record<string, number | null> | null, hasNext: boolean,
 *   currencySums?: Record<string, import('./list/footer-currencies.js').CurrencySum[]>}} PageData
 */

const NO_DATA = /** @type {PageData} */ ({ records: null, groups: null, total: null, aggregates: null, hasNext: false });
/** Keys of the routes this view navigated to itself: their arrival is no news. */
const REMEMBERED_ROUTES = 20;

/** @param {unknown} error */
function messageOf(error) {
  return error && typeof error === 'object' && 'detail' in error ? String(/** @type {{detail: unknown}} */ (error).detail) : String(error);
}

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

  const [state, setState] = useState(() => parseListRoute(route));
  const [data, setData] = useState(NO_DATA);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [reloads, setReloads] = useState(0);
  const [filtersOpen, setFiltersOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [, setLanguageReady] = useState(0);
  // The open export or import dialog: its component (loaded on first use) and what it works on.
  const [exchange, setExchange] = useState(/** @type {{kind: 'export' | 'import', component: any, target?: Record<string, unknown>, count?: number | null, selected?: boolean} | null} */ (null));
  const [announcement, setAnnouncement] = useState('');
  const [wizard, setWizard] = useState(/** @type {{method: string, title: string, component: any, activeIds: number[], selection: unknown} | null} */ (null));
  const sentRoutes = useRef(/** @type {string[]} */ ([]));
  const rendered = useRef(false);

  const fields = useMemo(() => readPaths(columns, { archived: archivable && state.archived }), [columns, archivable, state.archived]);
  const groupField = state.group && registry[state.group] ? { ...registry[state.group], name: state.group } : null;
  const grouped = Boolean(groupField);
  const effective = grouped ? state : { ...state, group: null };

  const groupRecords = useGroupRecords(model, (condition, page) =>
    groupRecordsQuery({ state: effective, registry, archivable, fields, defaultOrder, groupFilter: condition, page }));

  useEffect(() => {
    let live = true;
    void loadLanguage(lang).then(() => live && setLanguageReady((n) => n + 1));
    return () => {
      live = false;
    };
  }, [lang]);

  // A route this view did not write (back button, a link, another tab's URL) replaces the state.
  const incoming = routeKey(route);
  useEffect(() => {
    if (incoming === stateKey(state) || sentRoutes.current.includes(incoming)) return;
    setState(parseListRoute(route));
    selection.clear();
    groupRecords.reset();
  }, [incoming]);

  const queryKey = stateKey(effective);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    const body = pageQuery({ state: effective, registry, archivable, columns, fields, defaultOrder });
    const signal = controller.signal;
    Promise.all([
      api.query(model, body, { signal }),
      footerCurrencies(model, columns, body, signal),
      grouped ? groupCurrencies(model, columns, body, /** @type {string} */ (effective.group), groupKey, signal) : null,
    ])
      .then(([answer, currencySums, groupSums]) => {
        const { count, data: rows, aggregates } = /** @type {{count: number, data: any[], aggregates?: Record<string, number | null>}} */ (answer);
        // Past the last page (records deleted elsewhere): the last page there is.
        if (!rows.length && count > 0 && effective.page > 1) {
          update({ page: Math.max(1, Math.ceil(count / (grouped ? GROUP_PAGE_SIZE : PAGE_SIZE))) });
          return;
        }
        performance.clearMarks('ff:list-data');
        performance.mark('ff:list-data');
        rendered.current = false;
        setData(
          grouped
            ? {
                records: null,
                groups: rows.map((g) => {
                  const key = groupKey(g[/** @type {string} */ (effective.group)]);
                  return { key, value: g[/** @type {string} */ (effective.group)], count: g.count, aggregates: g.aggregates ?? {}, currencySums: groupSums?.get(key) ?? {} };
                }),
                total: count,
                aggregates: aggregates ?? null,
                currencySums,
                hasNext: rows.length === GROUP_PAGE_SIZE,
              }
            : { records: rows, groups: null, total: count, aggregates: aggregates ?? null, currencySums, hasNext: effective.page * PAGE_SIZE < count },
        );
        setError(null);
        setLoading(false);
      })
      .catch((err) => {
        if (controller.signal.aborted) return;
        setError(messageOf(err));
        setLoading(false);
      });
    return () => controller.abort();
  }, [model, queryKey, reloads, fields.join(',')]);

  // How long the page took to reach the screen once its data arrived.
  useLayoutEffect(() => {
    if (rendered.current || (!data.records && !data.groups)) return;
    rendered.current = true;
    if (!performance.getEntriesByName('ff:list-data', 'mark').length) return;
    performance.clearMeasures('ff:list-render');
    performance.measure('ff:list-render', 'ff:list-data');
  }, [data]);

  const groupViews = useMemo(
    () =>
      data.groups?.map((g) => {
        const loaded = groupRecords.groups.get(g.key);
        return /** @type {GroupView} */ ({
          key: g.key,
          label: groupField ? formatValue(groupField, g.value, { lang }) || 'None' : String(g.value),
          count: g.count,
          aggregates: g.aggregates,
          currencySums: g.currencySums ?? {},
          expanded: Boolean(loaded?.expanded),
          records: loaded?.records ?? [],
          loading: Boolean(loaded?.loading),
          error: loaded?.error ?? null,
          hasMore: Boolean(loaded && loaded.records.length < g.count),
        });
      }) ?? null,
    [data.groups, groupRecords.groups, lang],
  );

  const visibleIds = data.records ? data.records.map((r) => r.id) : (groupViews ?? []).flatMap((g) => (g.expanded ? g.records.map((r) => r.id) : []));
  const selection = useListSelection(visibleIds, data.total);

  /**
   * Changes what the list shows; anything but the page starts again at page 1 with nothing ticked.
   * @param {Partial<ListState>} patch
   */
  function update(patch) {
    const next = { ...state, page: 1, ...patch };
    setState(next);
    if (!('page' in patch)) {
      selection.clear();
      groupRecords.reset();
    }
    const key = stateKey(next);
    sentRoutes.current = [...sentRoutes.current.filter((k) => k !== key), key].slice(-REMEMBERED_ROUTES);
    navigate({ action: actionRef, view: 'list', ...listRouteParams(next) }, { replace: true });
  }

  /** After an action: nothing ticked, the page and the opened groups read again. */
  const refresh = () => {
    selection.clear();
    setReloads((n) => n + 1);
    groupRecords.refresh((key) => {
      const group = data.groups?.find((g) => g.key === key);
      return group && effective.group ? groupCondition(effective.group, group.value) : null;
    });
  };

  // A `reload` client action from the server (CONTRACTS C4): the page and opened groups read again.
  useReloadAction(refresh);

  /** @param {number} id */
  const open = (id) => navigate({ action: actionRef, view: 'form', id: String(id) });

  // The order the rows are in: the chosen one, else the model's first default entry (shown on its column too).
  const shownOrder = state.order ?? defaultOrderEntry(defaultOrder);

  /** @param {import('./list/list-columns.js').Column} column */
  const sort = (column) => {
    const [field, dir] = shownOrder ? shownOrder.split(' ') : [null, null];
    update({ order: `${column.name} ${field === column.name && dir === 'ASC' ? 'DESC' : 'ASC'}` });
  };

  const facts = {
    model,
    label: info.label ?? title,
    archivable,
    create: info.create !== false,
    write: info.write !== false,
    unlink: info.unlink !== false,
    wizards: info.wizards ?? [],
    reports: info.reports ?? [],
  };
  const currentSelection = () => selectionObject(selection.plain(), { state: effective, registry, archivable });

  /** @param {() => Promise<void>} work */
  const run = async (work) => {
    setBusy(true);
    try {
      await work();
    } finally {
      setBusy(false);
    }
  };

  /** @param {{method: string, title: string}} chosen */
  const openWizard = async (chosen) => {
    try {
      const { WizardDialog } = await import('../wizard/wizard-dialog.js');
      const plain = selection.plain();
      const activeIds = plain.allMatching ? visibleIds.filter((id) => !plain.excluded.includes(id)) : plain.ids;
      setWizard({ ...chosen, component: WizardDialog, activeIds, selection: plain.allMatching ? currentSelection() : undefined });
    } catch (err) {
      window.fieldforge?.toast.show({ type: 'error', message: `The ${chosen.title} dialog cannot be opened: ${messageOf(err)}` });
    }
  };

  /**
   * Opens the export dialog on the ticked rows, or on every record the list matches.
   * @param {boolean} selectedOnly
   */
  const openExport = async (selectedOnly) => {
    try {
      const { ExportDialog } = await import('../exchange/export-dialog.js');
      /** @type {Record<string, unknown>} */
      let target = {};
      if (selectedOnly) {
        target = { ...currentSelection() };
      } else {
        const filter = stateFilter(effective, registry, archivable);
        const terms = searchTerms(effective.search);
        if (filter) target.filter_str = filter;
        if (terms.length) target.name_search = terms;
      }
      // The file comes in the order the list shows (the sorted column, else the model's order).
      const order = orderOf(effective, defaultOrder);
      if (order.length) target.order_by = order;
      setExchange({ kind: 'export', component: ExportDialog, target, count: selectedOnly ? selection.count : data.total, selected: selectedOnly });
    } catch (err) {
      window.fieldforge?.toast.show({ type: 'error', message: `The export dialog cannot be opened: ${messageOf(err)}` });
    }
  };

  const openImport = async () => {
    try {
      const { ImportDialog } = await import('../exchange/import-dialog.js');
      setExchange({ kind: 'import', component: ImportDialog });
    } catch (err) {
      window.fieldforge?.toast.show({ type: 'error', message: `The import dialog cannot be opened: ${messageOf(err)}` });
    }
  };

  const actions = selection.count
    ? selectionActions({ facts, count: selection.count, lang, selection: currentSelection, archivedShown: archivable && state.archived, run, done: refresh, openWizard, openExport: () => openExport(true) })
    : [];

  const canReorder = reorderability({ registry, defaultOrder, state: effective, grouped, canWrite: facts.write });
  /**
   * Moves a row of the page to another place (a drop, or Alt+arrow), keeping the focus on it.
   * @param {number} id @param {number} to
   */
  const moveRow = async (id, to) => {
    const records = data.records;
    if (!records || busy || !canReorder?.enabled) return;
    const name = records.find((r) => r.id === id)?.display_name ?? `#${id}`;
    if (to < 0 || to >= records.length) {
      setAnnouncement(`${name} is already ${to < 0 ? 'first' : 'last'} on this page.`);
      return;
    }
    await run(async () => {
      try {
        const moved = await moveRecord({ model, records, id, to, state: effective, registry, archivable, defaultOrder });
        if (!moved) return;
        setData((current) => ({ ...current, records: moved }));
        setAnnouncement(`${name} moved to position ${moved.findIndex((r) => r.id === id) + 1} of ${moved.length}.`);
        requestAnimationFrame(() => /** @type {HTMLElement | null} */ (document.querySelector(`.ff-list-table tr[data-id="${id}"]`))?.focus());
      } catch (err) {
        window.fieldforge?.toast.show({ type: 'error', message: messageOf(err) });
      }
    });
  };

  // Focus goes back to the button that opened the builder, not to the page's start.
  const closeFilters = () => {
    setFiltersOpen(false);
    document.getElementById(`${filtersPanelId}-button`)?.focus();
  };

  const searching = Boolean(state.search.trim() || state.filters.length);
  const empty = html`<div class="ff-list-empty-message">
    ${searching
      ? html`<p>No ${title.toLowerCase()} match this search.</p>
          <button type="button" class="ff-button" onClick=${() => update({ search: '', filters: [] })}>Clear search and filters</button>`
      : html`<p>No ${title.toLowerCase()} yet.</p>${facts.create ? html`<p class="ff-list-hint">Create the first one with New.</p>` : null}`}
  </div>`;

  const pager = html`<${ListPager}
    page=${state.page}
    pageSize=${grouped ? GROUP_PAGE_SIZE : PAGE_SIZE}
    shown=${data.records?.length ?? data.groups?.length ?? 0}
    total=${data.total}
    grouped=${grouped}
    hasNext=${data.hasNext}
    lang=${lang}
    onPage=${(/** @type {number} */ page) => update({ page })}
  />`;

  const WizardComponent = wizard?.component;
  const ExchangeComponent = exchange?.component;

  return html`<section class="ff-list" aria-label=${title}>
    <${ListToolbar}
      title=${title}
      canCreate=${facts.create}
      onNew=${() => navigate({ action: actionRef, view: 'form' })}
      search=${state.search}
      onSearch=${(/** @type {string} */ search) => update({ search })}
      filtersOpen=${filtersOpen}
      filterCount=${state.filters.length}
      onToggleFilters=${() => setFiltersOpen(!filtersOpen)}
      groupFields=${groupFields}
      group=${grouped ? state.group : null}
      onGroup=${(/** @type {string | null} */ group) => update({ group })}
      archivable=${archivable}
      archived=${state.archived}
      onArchived=${(/** @type {boolean} */ archived) => update({ archived })}
      pager=${pager}
      filtersPanelId=${filtersPanelId}
      onExport=${() => openExport(false)}
      onImport=${facts.create ? openImport : null}
      onDefaultOrder=${canReorder && !canReorder.enabled ? () => update({ order: null }) : null}
    />
    <p class="ff-visually-hidden" role="status">${announcement}</p>
    <div id=${filtersPanelId} hidden=${!filtersOpen}>
      ${filtersOpen
        ? html`<${FilterBuilder}
            fields=${filterFields}
            initial=${columns[0]?.name}
            onAdd=${(/** @type {import('./list/field-filters.js').FieldFilter} */ f) => {
              closeFilters();
              update({ filters: [...state.filters, f] });
            }}
            onClose=${closeFilters}
          />`
        : null}
    </div>
    <${FilterChips}
      filters=${state.filters}
      registry=${registry}
      lang=${lang}
      onRemove=${(/** @type {number} */ index) => update({ filters: state.filters.filter((_, i) => i !== index) })}
      onClear=${() => update({ filters: [] })}
    />
    ${selection.count
      ? html`<${SelectionBar}
          count=${selection.count}
          total=${data.total}
          allMatching=${selection.selection.allMatching}
          pageAllSelected=${selection.pageState === 'all'}
          onSelectAll=${selection.selectAllMatching}
          onClear=${selection.clear}
          actions=${actions}
          busy=${busy}
          lang=${lang}
        />`
      : null}
    ${error
      ? html`<div class="ff-list-error" role="alert">
          <p>${error}</p>
          <button type="button" class="ff-button" onClick=${() => setReloads((n) => n + 1)}>Retry</button>
        </div>`
      : null}
    <div class=${`ff-list-scroll${loading ? ' ff-list-loading' : ''}`} aria-busy=${loading ? 'true' : 'false'}>
      ${data.records || data.groups
        ? html`<${ListTable}
            columns=${columns}
            records=${data.records}
            groups=${groupViews}
            groupLabel=${groupField?.label ?? null}
            order=${shownOrder}
            onSort=${sort}
            isSelected=${selection.isSelected}
            onToggle=${selection.toggle}
            pageState=${selection.pageState}
            onTogglePage=${selection.togglePage}
            onOpen=${open}
            lang=${lang}
            aggregates=${data.aggregates} currencySums=${data.currencySums ?? {}}
            onToggleGroup=${(/** @type {string} */ key) => {
              const group = data.groups?.find((g) => g.key === key);
              if (group && effective.group) groupRecords.toggle(key, groupCondition(effective.group, group.value));
            }}
            onMoreInGroup=${(/** @type {string} */ key) => {
              const group = data.groups?.find((g) => g.key === key);
              if (group && effective.group) groupRecords.more(key, groupCondition(effective.group, group.value));
            }}
            empty=${empty}
            caption=${title}
            reorder=${canReorder ? { ...canReorder, onMove: moveRow } : null}
          />`
        : !error
          ? html`<p class="ff-list-placeholder" role="status">Loading…</p>`
          : null}
    </div>
    ${WizardComponent && wizard
      ? html`<${WizardComponent}
          model=${model}
          method=${wizard.method}
          activeIds=${wizard.activeIds}
          selection=${wizard.selection}
          lang=${lang}
          onClose=${() => setWizard(null)}
          onDone=${(/** @type {{reload: boolean}} */ outcome) => {
            if (outcome.reload) refresh();
          }}
        />`
      : null}
    ${ExchangeComponent && exchange?.kind === 'export'
      ? html`<${ExchangeComponent}
          model=${model}
          label=${title}
          registry=${registry}
          initialPaths=${columns.map((c) => c.name)}
          target=${exchange.target}
          count=${exchange.count ?? null}
          selected=${Boolean(exchange.selected)}
          lang=${lang}
          onClose=${() => setExchange(null)}
        />`
      : null}
    ${ExchangeComponent && exchange?.kind === 'import'
      ? html`<${ExchangeComponent}
          model=${model}
          label=${title}
          registry=${registry}
          lang=${lang}
          onClose=${() => setExchange(null)}
          onImported=${refresh}
        />`
      : null}
  </section>`;
}

/**
 * The first default ordering entry as `<field> ASC|DESC`, or null when it is not that simple.
 * @param {string[]} entries
 */
function defaultOrderEntry(entries) {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+(ASC|DESC))?\s*$/i.exec(entries[0] ?? '');
  return m ? `${m[1]} ${(m[2] ?? 'ASC').toUpperCase()}` : null;
}

/**
 * A group's key: its value, or the linked record's id.
 * @param {unknown} value
 */
function groupKey(value) {
  if (value && typeof value === 'object' && 'id' in value) return `id:${/** @type {{id: unknown}} */ (value).id}`;
  return JSON.stringify(value ?? null);
}
