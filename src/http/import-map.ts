/**
 * The import map of the platform's pages (CONTRACTS C2): the bare specifiers of the browser code
 * resolved to URLs of this server. The vendored libraries by name (`preact` →
 * `/web/vendor/preact@11.2.0/preact.mjs`, `web-vendor.ts`), and `fieldforge/web/` → `/web/`, by
 * which a module's own web assets (`/web/modules/<identifier>/…`) and the client's shared server
 * sources (`/web/shared/…`) import the client's files under names the type-checker resolves too
 * (`web/tsconfig.json` `paths`). A page carries it inline, before any module script; its
 * Content-Security-Policy allows exactly this script by its hash (`scriptHash`), no other inline one.
 */
import { createHash } from 'node:crypto';
import { loadVendorModules } from './web-vendor.js';

/** The client's own folder under a name the module web assets can import (`fieldforge/web/client/registry.js`). */
export const WEB_PREFIX = 'fieldforge/web/';

export interface PageImportMap {
  /** The `imports` of the map: specifier (or prefix ending in `/`) → URL. */
  imports: Readonly<Record<string, string>>;
  /** The `<script type="importmap">` element, as the page writes it. */
  tag: string;
  /** The CSP source allowing that inline script: `'sha256-…'`. */
  scriptHash: string;
}

let built: PageImportMap | null = null;

export function pageImportMap(): PageImportMap {
  if (built) return built;
  const imports: Record<string, string> = Object.fromEntries(loadVendorModules().urls);
  imports[WEB_PREFIX] = '/web/';
  // `<` escaped: the text sits inside a script element, where `</script` would end it.
  const json = JSON.stringify({ imports }).replace(/</g, '\\u003c');
  built = {
    imports,
    tag: `<script type="importmap">${json}</script>`,
    scriptHash: `'sha256-${createHash('sha256').update(json, 'utf8').digest('base64')}'`,
  };
  return built;
}
