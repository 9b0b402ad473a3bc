/**
 * Translations: loading the installed modules' `i18n/<code>.yaml` files into `Translation` rows
 * when a language is activated, choosing the caller's language, and looking labels up.
 *
 * ## Which language a caller gets
 *
 * The first of these that names an active language (exactly, else by its base language: `fr-CA`
 * falls back to an active `fr`) wins; a preference naming an inactive language does not count:
 *
 * 1. an explicit `lang` (the `inputs.lang` of `/api/execute/Language/get_registry`),
 * 2. the request context's `lang` (`request_body.context.lang`, as in Odoo),
 * 3. the acting user's `User.lang`,
 * 4. the `Accept-Language` header, by quality (`parseAcceptLanguage`), where a route passes it
 *    (`GET /api/get_registry`, and every `/api/execute` method through `withCallerLanguage`),
 * 5. `en`, the source language.
 *
 * Resolving costs one query for the active languages, and one more for the user's `lang` only
 * when no explicit language (1, 2) is active; routes that translate nothing never resolve.
 *
 * Lookups read translations as the platform: labels, menu names and view names are not secrets of
 * anyone, and the caller's rights still decide which menus and models it sees. Translations of an
 * inactive language are kept (reactivating it is a no-op apart from reloading the files) but never
 * served.
 */
import { UserError } from '../errors.js';
import { currentEnv, withEnv } from '../orm/env.js';
import type { RegistryEntry } from '../orm/fields/field.js';
import { QuerySet } from '../orm/queryset.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import { readTranslationFiles } from './translation-files.js';

export const SOURCE_LANGUAGE = 'en';
const TRANSLATION = 'Translation';
const LANGUAGE = 'Language';

/**
 * Loads `code`'s translation files of every module installed in the current database (in
 * dependency order: a later module's entry for the same key wins) into `Translation` rows:
 * new keys are created, changed texts updated, nothing duplicated, so it may run any number of
 * times. Runs as the platform. Returns how many entries the files hold.
 */
export async function loadTranslations(code: string): Promise<number> {
  return withEnv({ su: true }, async () => {
    const { registry } = currentEnv();
    if (!registry.has(TRANSLATION)) return 0;
    const wanted = new Map<string, { value: string; module: string }>();
    for (const moduleId of registry.modules) {
      const dir = registry.moduleDirs.get(moduleId);
      if (!dir) continue;
      for (const { key, value } of await readTranslationFiles(moduleId, dir, code)) wanted.set(key, { value, module: moduleId });
    }
    if (!wanted.size) return 0;
    const meta = registry.meta(TRANSLATION);
    const existing = new Map<string, { id: number; value: unknown; module: unknown }>();
    for (const row of await new QuerySet(meta).filter({ lang: code }).read(['key', 'value', 'module'])) {
      existing.set(row.key as string, { id: row.id as number, value: row.value, module: row.module });
    }
    const fresh: Record<string, unknown>[] = [];
    for (const [key, { value, module }] of wanted) {
      const row = existing.get(key);
      if (!row) fresh.push({ lang: code, key, value, module });
      else if (row.value !== value || row.module !== module) await writeRecords(meta, [row.id], { value, module });
    }
    if (fresh.length) await createRecords(meta, fresh);
    return wanted.size;
  });
}

/** The codes of the active languages. */
export async function activeLanguages(): Promise<string[]> {
  return (await activeLanguageRows()).map((r) => r.code as string);
}

/** The active `Language` rows with `code` and `fields`, read as the platform. */
export async function activeLanguageRows(fields: readonly string[] = []): Promise<Record<string, unknown>[]> {
  const { registry } = currentEnv();
  if (!registry.has(LANGUAGE)) return [{ code: SOURCE_LANGUAGE }];
  return withEnv({ su: true }, () =>
    new QuerySet(registry.meta(LANGUAGE)).filter({ active: true }).read([...new Set(['code', ...fields])]));
}

/**
 * The active language a caller asking for `candidates` (best first) gets: the first one active
 * exactly (case-insensitive) or by its base language; `en` when none is.
 */
export async function resolveLanguage(candidates: readonly (string | null | undefined)[]): Promise<string> {
  if (!candidates.some(wanted)) return SOURCE_LANGUAGE;
  return (pickActive(await activeLanguageRows(), candidates)?.code as string | undefined) ?? SOURCE_LANGUAGE;
}

function wanted(candidate: unknown): candidate is string {
  return typeof candidate === 'string' && candidate.trim() !== '';
}

/** The first row of `rows` that a candidate names exactly (case-insensitive) or by its base language. */
function pickActive<R extends Record<string, unknown>>(rows: readonly R[], candidates: readonly unknown[]): R | undefined {
  const byLower = new Map(rows.map((r) => [String(r.code).toLowerCase(), r]));
  for (const candidate of candidates) {
    if (!wanted(candidate)) continue;
    const lower = candidate.trim().replace(/_/g, '-').toLowerCase();
    const found = byLower.get(lower) ?? byLower.get(lower.split('-')[0]!);
    if (found) return found;
  }
  return undefined;
}

/** `fr-CH, fr;q=0.9, en;q=0.8, *;q=0.5` → `['fr-CH', 'fr', 'en']` (by quality, `*` and q=0 left out). */
export function parseAcceptLanguage(header: string | undefined | null): string[] {
  if (!header) return [];
  return header.split(',').slice(0, 32).map((part, index) => {
    const [tag = '', ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
  }).filter((e) => e.tag && e.tag !== '*' && e.q > 0 && /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(e.tag))
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((e) => e.tag);
}

/** The environment context's key holding the request's `Accept-Language` header (`withCallerLanguage`). */
export const ACCEPT_LANGUAGE_KEY = 'accept_language';

/** What a caller says about its language; every member is optional (see the module comment). */
export interface LanguageRequest {
  /** An explicit language (`inputs.lang`). */
  readonly lang?: unknown;
  /** The request context, whose `lang` counts; default the environment's. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** The `Accept-Language` header; default the environment context's (`withCallerLanguage`). */
  readonly acceptLanguage?: string | null;
}

/**
 * Runs `fn` with the request's language preferences in the environment context (its `lang` and
 * `Accept-Language` header), so `callerLanguage()` and `callerFormat()` called anywhere below —
 * an API method, a report — resolve as the route would.
 */
export function withCallerLanguage<T>(request: { lang?: unknown; acceptLanguage?: string | null }, fn: () => Promise<T>): Promise<T> {
  const context: Record<string, unknown> = { ...currentEnv().context };
  if (wanted(request.lang)) context.lang = request.lang;
  if (wanted(request.acceptLanguage)) context[ACCEPT_LANGUAGE_KEY] = request.acceptLanguage;
  return withEnv({ context }, fn);
}

/** The `lang` of user `uid` (the acting user by default), read as the platform; null when it has none. */
export async function userLanguage(uid: number | null = currentEnv().uid): Promise<string | null> {
  const { registry } = currentEnv();
  if (uid === null || !registry.has('User') || !registry.meta('User').fields.get('lang')?.column) return null;
  const [user] = await withEnv({ su: true }, () => new QuerySet(registry.meta('User')).with_archived().filter({ id: uid }).read(['lang']));
  return typeof user?.lang === 'string' && user.lang !== '' ? user.lang : null;
}

/**
 * The caller's language (see the module comment): the explicit `lang`, the context's `lang` (the
 * context given, else the environment's), the acting user's `lang`, the `Accept-Language` header
 * (given, else the environment's), `en`.
 */
export async function callerLanguage(request: LanguageRequest = {}): Promise<string> {
  return ((await callerLanguageRow(request))?.code as string | undefined) ?? SOURCE_LANGUAGE;
}

/**
 * The active `Language` row (with `code` and `fields`) of the caller's language: one query, and
 * one more for the user's `lang` when no explicit language is active. A database without the
 * `Language` model gives `{code: 'en'}` alone.
 */
export async function callerLanguageRow(request: LanguageRequest = {}, fields: readonly string[] = []): Promise<Record<string, unknown> | undefined> {
  const env = currentEnv();
  const context = request.context ?? env.context;
  const rows = await activeLanguageRows(fields);
  const explicit = pickActive(rows, [request.lang, context.lang, env.context.lang]);
  if (explicit) return explicit;
  const header = request.acceptLanguage !== undefined ? request.acceptLanguage : env.context[ACCEPT_LANGUAGE_KEY];
  const preferred = pickActive(rows, [await userLanguage(), ...parseAcceptLanguage(typeof header === 'string' ? header : null)]);
  return preferred ?? rows.find((r) => r.code === SOURCE_LANGUAGE);
}

/** The translations of `lang` whose keys start with one of `prefixes`, by key (empty for `en`). */
export async function translationsOf(lang: string, prefixes: readonly string[]): Promise<Map<string, string>> {
  const { registry } = currentEnv();
  const out = new Map<string, string>();
  if (lang === SOURCE_LANGUAGE || !registry.has(TRANSLATION) || !prefixes.length) return out;
  const filter = prefixes.map((p) => `Q(key__startswith=${JSON.stringify(p)})`).join(' | ');
  const rows = await withEnv({ su: true }, () => new QuerySet(registry.meta(TRANSLATION)).filter({ lang }).filter(filter).read(['key', 'value']));
  for (const row of rows) out.set(row.key as string, row.value as string);
  return out;
}

/** `model`'s verbose name in `lang`. */
export async function modelLabel(model: string, lang: string): Promise<string> {
  const meta = currentEnv().registry.meta(model);
  return (await translationsOf(lang, [`model:${model}`])).get(`model:${model}`) ?? meta.verboseName;
}

/**
 * `get_registry` entries of `model` with field labels and Selection choice labels in `lang`
 * (copies; what has no translation stays as declared).
 */
export async function translateRegistry(model: string, entries: Record<string, RegistryEntry>, lang: string): Promise<Record<string, RegistryEntry>> {
  const found = await translationsOf(lang, [`field:${model}.`, `selection:${model}.`]);
  if (!found.size) return entries;
  const out: Record<string, RegistryEntry> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const copy: RegistryEntry = { ...entry, label: found.get(`field:${model}.${name}`) ?? entry.label };
    const choices = (entry as { choices?: [string, string][] }).choices;
    if (choices) {
      (copy as { choices?: [string, string][] }).choices = choices.map(([value, label]) =>
        [value, found.get(`selection:${model}.${name}.${value}`) ?? label]);
    }
    out[name] = copy;
  }
  return out;
}

/** Names of records (menus, views, actions) by their qualified identifier, in `lang`. */
export async function translateNames<T extends { identifier?: unknown; name?: unknown }>(
  kind: 'menu' | 'view' | 'action', records: readonly T[], lang: string,
): Promise<T[]> {
  const found = await translationsOf(lang, [`${kind}:`]);
  return records.map((r) => {
    const text = typeof r.identifier === 'string' ? found.get(`${kind}:${r.identifier}`) : undefined;
    return text === undefined ? r : { ...r, name: text };
  });
}

/** Refuses `code` unless it is a BCP 47 language tag of at most 10 characters (ARCHITECTURE §9). */
export function assertLanguageCode(code: unknown): void {
  let canonical: string[] = [];
  try {
    canonical = typeof code === 'string' ? Intl.getCanonicalLocales(code) : [];
  } catch {
    // Not a language tag.
  }
  if (typeof code !== 'string' || code.length > 10 || canonical.length !== 1) {
    throw new UserError(`'${String(code).slice(0, 40)}' is not a language code: a BCP 47 tag of at most 10 characters (en, fr, pt-BR)`);
  }
}

