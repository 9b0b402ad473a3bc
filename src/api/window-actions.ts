/**
 * One `WindowAction` as the web client opens it (`GET /api/window-action/{identifier or id}`):
 * its model, modes, default view, client view, name in the caller's language, and the arch of
 * its List and Form views. A type the action links no view of takes the model's first view of
 * that type, as Odoo does; with none at all the client builds a default from the registry.
 * Needs the read right on the action's model and, when the action names `groups`, membership of
 * one of them (the menus only offer those).
 */
import { assertRight } from '../access/record-access.js';
import { AccessError, NotFound } from '../errors.js';
import { inActionAudience } from './action-groups.js';
import { callerLanguage, translateNames } from '../i18n/translations.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';

export type ViewType = 'List' | 'Form';
const VIEW_TYPES: readonly ViewType[] = ['List', 'Form'];

export interface WindowActionDescription {
  id: number;
  identifier: string | null;
  name: string;
  model: string;
  modes: string[];
  default_view: string;
  /** A screen of the client's own (`api_keys`, `modules`, …) instead of the generic views; null for those. */
  client_view: string | null;
  views: Partial<Record<ViewType, unknown>>;
}

export async function describeWindowAction(ref: string, language: { acceptLanguage?: string | null } = {}): Promise<WindowActionDescription> {
  const { registry } = currentEnv();
  const missing = () => new NotFound(`No window action '${ref.slice(0, 100)}'`);
  if (!registry.has('WindowAction')) throw missing();
  const actionMeta = registry.meta('WindowAction');
  const hasClientView = actionMeta.fields.has('client_view');
  const hasGroups = actionMeta.fields.has('groups');
  const byId = /^[1-9][0-9]{0,9}$/.test(ref) ? { id: Number(ref) } : { identifier: ref };
  const [action] = await withEnv({ su: true }, () => new QuerySet(actionMeta).filter(byId)
    .read(['identifier', 'name', 'model', 'modes', 'default_view', 'views.type', 'views.arch', ...(hasClientView ? ['client_view'] : []), ...(hasGroups ? ['groups.id'] : [])]));
  if (!action) throw missing();
  const model = action.model as string;
  if (!registry.has(model)) throw new NotFound(`The action '${ref.slice(0, 100)}' opens model '${model}', which is not installed`);
  assertRight(registry.meta(model), 'read');
  const groups = hasGroups ? ((action.groups as { id: number }[] | null) ?? []).map((g) => g.id) : [];
  if (!inActionAudience(groups)) throw new AccessError(`You are not allowed to open ${(action.name as string).slice(0, 100)}`);

  const views: Partial<Record<ViewType, unknown>> = {};
  for (const view of (action.views as { type: string; arch: unknown }[] | null) ?? []) {
    const type = view.type as ViewType;
    if (VIEW_TYPES.includes(type) && !(type in views)) views[type] = view.arch;
  }
  const lacking = VIEW_TYPES.filter((type) => !(type in views));
  if (lacking.length && registry.has('UiView')) {
    const fallbacks = await withEnv({ su: true }, () => new QuerySet(registry.meta('UiView'))
      .filter({ model, type__in: lacking }).read(['type', 'arch']));
    for (const view of fallbacks) if (!(view.type as ViewType in views)) views[view.type as ViewType] = view.arch;
  }

  const [named] = await translateNames('action', [action], await callerLanguage({ acceptLanguage: language.acceptLanguage ?? null }));
  const modes = action.modes;
  return {
    id: action.id as number,
    identifier: (action.identifier as string | null) ?? null,
    name: named!.name as string,
    model,
    modes: (Array.isArray(modes) ? modes : typeof modes === 'string' ? modes.split(',') : []).map((m) => String(m).trim()).filter(Boolean),
    default_view: (action.default_view as string | null) || 'List',
    client_view: hasClientView ? ((action.client_view as string | null) || null) : null,
    views,
  };
}
