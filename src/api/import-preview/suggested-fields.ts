/**
 * The import path each column header suggests (CONTRACTS C3), so a person only confirms the
 * mapping. Headers and names are compared ignoring case and white space (`Order date`,
 * `order date`, `ORDERDATE`). A header is read as a path of `/`-separated parts, each matching,
 * in this order, a field's name, its label in the caller's language, or its source label — so
 * the headers of an import-compatible export (`customer/identifier`, `order_lines/product`,
 * `tags/ID`) and of a default export in the caller's language (`Client`, `Étiquettes`) both map.
 *
 * - At the top, and inside OneToMany lines (`order_lines/product`), a part names a field an
 *   import may write; `id` (database id) and `identifier` (external id) are importable too.
 * - After a ManyToOne or ManyToMany, the last part names how the target is found: `ID` (its
 *   database id, written upper-case as in `tags/ID`), `identifier`, or a stored field of the
 *   target (`customer/name`, `customer/email`).
 *
 * The answer is the canonical path (field names joined by `/`), or null. A path is suggested
 * once: a later header naming the same field gets null, since an import cannot map it twice.
 */
import { translationsOf, SOURCE_LANGUAGE } from '../../i18n/translations.js';
import type { Field } from '../../orm/fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField } from '../../orm/fields/relational-fields.js';
import type { ModelMeta } from '../../orm/model-meta.js';

/** Deepest path suggested (`order_lines/product/identifier`). */
const MAX_PARTS = 4;

/** What a header part is compared as. */
export function normalizeHeader(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, '');
}

export async function suggestFields(meta: ModelMeta, headers: readonly string[], lang: string): Promise<(string | null)[]> {
  const labels = new LabelBook(lang);
  const taken = new Set<string>();
  const out: (string | null)[] = [];
  for (const header of headers) {
    const parts = header.split('/').map(normalizeHeader);
    const path = parts.length <= MAX_PARTS && parts.every((p) => p !== '') ? await resolve(meta, parts, labels, 'write') : null;
    out.push(path && !taken.has(path) ? path : null);
    if (path) taken.add(path);
  }
  return out;
}

/** What a part may name: a field an import writes, or the key finding a related record. */
type Role = 'write' | 'key';

async function resolve(meta: ModelMeta, parts: readonly string[], labels: LabelBook, role: Role): Promise<string | null> {
  const [part, ...rest] = parts as [string, ...string[]];
  if (role === 'key' && part === 'id') return rest.length ? null : 'ID';
  const field = await labels.find(meta, part, (f) => (role === 'write' ? importable(f) : isKey(f)));
  if (!field) return null;
  if (!rest.length) return field.name;
  let inner: string | null = null;
  if (role === 'write' && field instanceof OneToManyField) inner = await resolve(field.target, rest, labels, 'write');
  else if (role === 'write' && (field instanceof ManyToOneField || field instanceof ManyToManyField) && rest.length === 1) {
    inner = await resolve(field.target, rest, labels, 'key');
  }
  return inner === null ? null : `${field.name}/${inner}`;
}

function importable(f: Field): boolean {
  if (f.options.internal) return false;
  return f.isSettable || f.name === 'id' || f.name === 'identifier';
}

/** A field a related record can be found by: a stored scalar (a relation's own name would need another part). */
function isKey(f: Field): boolean {
  return !f.options.internal && f.column !== null && !f.isRelational && f.type !== 'Binary' && f.type !== 'Json';
}

/** Field labels of each model met, in the caller's language, loaded once per model. */
class LabelBook {
  readonly #translated = new Map<string, Map<string, string>>();
  constructor(readonly lang: string) {}

  async find(meta: ModelMeta, part: string, allowed: (f: Field) => boolean): Promise<Field | null> {
    const candidates = [...meta.fields.values()].filter(allowed);
    const translated = await this.of(meta);
    return candidates.find((f) => normalizeHeader(f.name) === part)
      ?? candidates.find((f) => translated.has(f.name) && normalizeHeader(translated.get(f.name)!) === part)
      ?? candidates.find((f) => normalizeHeader(f.label) === part)
      ?? null;
  }

  async of(meta: ModelMeta): Promise<Map<string, string>> {
    let found = this.#translated.get(meta.name);
    if (found) return found;
    found = new Map();
    if (this.lang !== SOURCE_LANGUAGE) {
      const prefix = `field:${meta.name}.`;
      for (const [key, value] of await translationsOf(this.lang, [prefix])) found.set(key.slice(prefix.length), value);
    }
    this.#translated.set(meta.name, found);
    return found;
  }
}
