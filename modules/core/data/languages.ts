/**
 * The world's common languages as `Language` records (spec §2.5), generated — never typed by
 * hand — from Node's ICU/CLDR (`src/i18n/format.ts` derives the formats):
 *
 * - the set: a curated list of 80 BCP 47 codes, the languages with CLDR "modern" coverage that
 *   business software ships (Odoo's list, give or take), plus the regional variants whose formats
 *   differ from their language's (`en-GB`, `fr-CA`, `pt-BR`, `es-419`, `ar-EG`, `zh-TW`…). Codes
 *   ICU does not support are left out, so the list only shrinks on an ICU without them;
 * - `name`: the language's own name (`Intl.DisplayNames` in that language), first letter upper
 *   case (`Français`, `العربية`, `日本語`);
 * - `direction`: `Intl.Locale#getTextInfo()`;
 * - `date_format` / `time_format`: patterns in the token set of `src/i18n/format.ts`, from
 *   `formatToParts` of a known instant (`en` → `MM/DD/YYYY`, `h:mm a`; `fr` → `DD/MM/YYYY`, `HH:mm`);
 * - `decimal_separator` / `thousands_separator`: `Intl.NumberFormat#formatToParts(1234567.89)`.
 *
 * `en` is the source language: the only record written `active: true`, and it cannot be modified
 * afterwards (`Language._check_change`) — an upgrade writes it the same values, which is no change.
 * The other records say nothing of `active`: created inactive, never switched off by an upgrade.
 */
import { deriveFormats } from '../../../src/i18n/format.js';

export const LANGUAGE_CODES = [
  'en', 'en-GB', 'ar', 'ar-EG', 'az', 'be', 'bg', 'bn', 'bs', 'ca', 'cs', 'cy', 'da', 'de', 'de-CH',
  'el', 'es', 'es-419', 'es-MX', 'et', 'eu', 'fa', 'fi', 'fil', 'fr', 'fr-BE', 'fr-CA', 'fr-CH', 'ga',
  'gl', 'gu', 'he', 'hi', 'hr', 'hu', 'hy', 'id', 'is', 'it', 'ja', 'ka', 'kk', 'km', 'kn', 'ko',
  'lb', 'lo', 'lt', 'lv', 'mk', 'ml', 'mn', 'mr', 'ms', 'my', 'nb', 'ne', 'nl', 'nl-BE', 'pa', 'pl',
  'pt', 'pt-BR', 'ro', 'ru', 'si', 'sk', 'sl', 'sq', 'sr', 'sr-Latn', 'sv', 'sw', 'ta', 'te', 'th',
  'tr', 'uk', 'ur', 'uz', 'vi', 'zh-CN', 'zh-HK', 'zh-TW',
] as const;

type LanguageRecord = {
  data_type: 'Language';
  identifier: string;
  code: string;
  name: string;
  active?: true;
  direction: 'ltr' | 'rtl';
  date_format: string;
  time_format: string;
  decimal_separator: string;
  thousands_separator: string;
};

let generated: LanguageRecord[] | undefined;

export default function languageRecords(): LanguageRecord[] {
  generated ??= generate();
  return generated;
}

/** `pt-BR` → `lang_pt_br`. */
export function languageIdentifier(code: string): string {
  return `lang_${code.toLowerCase().replace(/-/g, '_')}`;
}

function generate(): LanguageRecord[] {
  return LANGUAGE_CODES.filter((code) => Intl.DateTimeFormat.supportedLocalesOf(code).length > 0).map((code) => {
    const formats = deriveFormats(code);
    for (const [key, max] of [['date_format', 20], ['time_format', 20], ['decimal_separator', 5], ['thousands_separator', 5]] as const) {
      if (formats[key].length > max) throw new Error(`languages.ts: ${code} ${key} '${formats[key]}' is longer than ${max}`);
    }
    return {
      data_type: 'Language',
      identifier: languageIdentifier(code),
      code,
      name: ownName(code),
      ...(code === 'en' ? { active: true as const } : {}),
      ...formats,
    };
  });
}

function ownName(code: string): string {
  const name = new Intl.DisplayNames([code], { type: 'language' }).of(code) ?? code;
  const [first = ''] = name;
  return first.toLocaleUpperCase(code) + name.slice(first.length);
}
