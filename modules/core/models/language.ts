import { Model, QuerySet, UserError, currentEnv, fields, withEnv } from 'fieldforge';
import type { ModelChange } from 'fieldforge';
import {
  SOURCE_LANGUAGE, assertLanguageCode, callerLanguage, loadTranslations, modelLabel, translateNames, translateRegistry,
} from '../../../src/i18n/translations.js';
import { callerFormat, formatValues } from '../../../src/i18n/locale.js';
import type { RegistryEntry } from '../../../src/orm/fields/field.js';
import { assertRight } from '../../../src/access/record-access.js';

/** Columns every model has: not the language's own data, never compared by the `en` guard. */
const GENERIC = new Set(['id', 'identifier', 'created_date', 'created_by', 'updated_date', 'updated_by', 'display_name']);

/**
 * A language (spec §2.5): a BCP 47 code of at most 10 characters, its own name, and the locale
 * formats a user on it sees (`src/i18n/format.ts` renders them). The world's common languages are
 * seeded from ICU/CLDR by `data/languages.ts`, inactive except `en`.
 *
 * - `en` is the source language: any write that would change it, and its deletion, is refused
 *   with a `UserError` (400) on every path — API, ORM, querysets, data files — by
 *   `_check_change`; a write of the values it already has is no change and passes (an upgrade
 *   re-writes the seed).
 * - Activating a language (`active` → true, on create or write, by anyone) loads the installed
 *   modules' `i18n/<code>.yaml` files into `Translation` rows (`src/i18n/translations.ts`):
 *   `translations_loaded` is a stored computed field depending on `active`, so every write path
 *   runs it, as the platform. Writing `active: true` again reloads the files (after a module
 *   upgrade); deactivating keeps the rows but they are no longer served; nothing is duplicated.
 * - `get_registry` and `get_menus` (`/api/execute/Language/<method>`) answer labels and menu
 *   names in the caller's language: `inputs.lang`, `request_body.context.lang`, the user's
 *   `User.lang`, `Accept-Language`, else `en` — active languages only (`callerLanguage`).
 * - `format_values` renders dates, times, numbers and amounts the way the caller's language
 *   writes them (`src/i18n/locale.ts`), for a client or a report.
 */
export class Language extends Model {
  static override _verbose_name = 'Language';
  static override _order_by = ['name ASC'];
  static override _unique_together = [['code']];
  static override _name_search_fields = ['name', 'code'];
  static override _api_methods = ['get_registry', 'get_menus', 'format_values'];
  static override fields = {
    code: fields.Char({ max_length: 10, index: true, required: true, description: 'BCP 47 code (en, fr, pt-BR)' }),
    name: fields.Char({ max_length: 255, required: true }),
    active: fields.Boolean({ default: false }),
    direction: fields.Selection({ choices: ['ltr', 'rtl'], default: 'ltr' }),
    date_format: fields.Char({ max_length: 20, default: 'DD/MM/YYYY', required: true }),
    time_format: fields.Char({ max_length: 20, default: 'HH:mm' }),
    decimal_separator: fields.Char({ max_length: 5, default: '.' }),
    thousands_separator: fields.Char({ max_length: 5, default: ',' }),
    // Loads the translation files when the language is (re)activated; see the class comment.
    translations_loaded: fields.Boolean({ calculate: 'calc_translations_loaded', store: true, depends: ['active'], internal: true }),
  };

  declare code: string;
  declare name: string;
  declare active: boolean | null;
  declare direction: 'ltr' | 'rtl' | null;
  declare date_format: string;
  declare time_format: string | null;
  declare decimal_separator: string | null;
  declare thousands_separator: string | null;

  async calc_translations_loaded(): Promise<boolean> {
    if (!this.active || !this.code) return false;
    await loadTranslations(this.code);
    return true;
  }

  /** Codes are BCP 47 tags; `en` cannot be modified or deleted (see the class comment). */
  static override async _check_change(change: ModelChange): Promise<void> {
    if (change.op === 'create') {
      for (const vals of change.vals) assertLanguageCode(vals.code);
      return;
    }
    if (change.op === 'write' && 'code' in change.vals) assertLanguageCode(change.vals.code);
    const meta = this.meta();
    const [source] = await withEnv({ su: true }, () =>
      new QuerySet(meta).with_archived().filter({ code: SOURCE_LANGUAGE, id__in: [...change.ids] }).read([...meta.fields.keys()].filter((n) => meta.fields.get(n)!.column)));
    if (!source) return;
    if (change.op === 'delete') {
      throw new UserError(`${source.name} (${SOURCE_LANGUAGE}) is the source language: it cannot be deleted`);
    }
    const changed = Object.entries(change.vals)
      .filter(([name, value]) => {
        const field = meta.fields.get(name);
        return field?.column && !GENERIC.has(name) && !field.isComputed && !sameValue(source[name], value);
      })
      .map(([name]) => name);
    if (changed.length) {
      throw new UserError(`${source.name} (${SOURCE_LANGUAGE}) is the source language and cannot be modified (${changed.join(', ')})`);
    }
  }

  /**
   * `get_registry` of `inputs.model` with the model's label, field labels and Selection choice
   * labels in the caller's language: `{model, lang, label, fields}`. Needs the read right on the
   * model, as `get_registry` does.
   */
  static async get_registry(inputs: Record<string, unknown>, context: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const { registry } = currentEnv();
    if (typeof inputs.model !== 'string' || !registry.has(inputs.model)) {
      throw new UserError(`get_registry: 'model' must name a model, got ${JSON.stringify(inputs.model ?? null)?.slice(0, 60)}`);
    }
    const meta = registry.meta(inputs.model);
    assertRight(meta, 'read');
    const lang = await callerLanguage({ lang: inputs.lang, context });
    const entries: Record<string, RegistryEntry> = {};
    for (const [name, f] of meta.fields) if (!f.options.internal) entries[name] = f.describe();
    return { model: meta.name, lang, label: await modelLabel(meta.name, lang), fields: await translateRegistry(meta.name, entries, lang) };
  }

  /**
   * The menus the caller may read, in the caller's language: `{lang, menus: [{id, identifier,
   * name, sequence, icon, parent, action}]}`, in menu order.
   */
  static async get_menus(inputs: Record<string, unknown>, context: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const { registry } = currentEnv();
    const lang = await callerLanguage({ lang: inputs.lang, context });
    const menus = await new QuerySet(registry.meta('UiMenu')).read(['identifier', 'name', 'sequence', 'icon', 'parent', 'action']);
    return { lang, menus: await translateNames('menu', menus, lang) };
  }

  /**
   * `inputs.values` (`[{type: 'date'|'time'|'datetime'|'number'|'monetary', value, digits?,
   * currency?}]`) rendered in the caller's language, instants in `inputs.tz` (default UTC):
   * `{lang, direction, date_format, time_format, decimal_separator, thousands_separator,
   * values: [text…]}`. Right-to-left texts come wrapped in U+2067…U+2069. Needs no right: it
   * reveals nothing but formats and the symbols of the currencies named.
   */
  static async format_values(inputs: Record<string, unknown>, context: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const format = await callerFormat({ lang: inputs.lang, context });
    const values = await formatValues(inputs.values, format, { timeZone: inputs.tz });
    const { code, ...formats } = format;
    return { lang: code, ...formats, values };
  }
}

function sameValue(stored: unknown, given: unknown): boolean {
  if (stored === given) return true;
  return (stored === null || stored === undefined) && (given === null || given === undefined);
}

/**
 * One translated text: `key` names what it translates (`field:Currency.symbol`, `menu:core.menu_settings`;
 * see `src/i18n/translation-files.ts`), `value` its text in `lang`, `module` the module whose
 * `i18n/<lang>.yaml` gave it. Loaded when a language is activated; one row per language and key.
 */
export class Translation extends Model {
  static override _verbose_name = 'Translation';
  static override _order_by = ['lang ASC', 'key ASC'];
  static override _unique_together = [['lang', 'key']];
  static override _rec_name = 'key';
  static override fields = {
    lang: fields.Char({ max_length: 10, required: true, index: true }),
    key: fields.Char({ max_length: 255, required: true }),
    value: fields.Text({ required: true }),
    module: fields.Char({ max_length: 64 }),
  };

  declare lang: string;
  declare key: string;
  declare value: string;
  declare module: string | null;
}
