/**
 * Settings > General > API Keys (spec §5, CONTRACTS C2): the keys with their prefix, account,
 * last use and expiry; `New` creates one (name, groups, optional expiry) and shows the key once,
 * with a Copy button and a warning; `Revoke` asks first, then the key is refused from the next
 * request on. Administrators' screen: the API answers 403 to anyone else, said here in place.
 */
import { html } from '../../lib/html.js';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { formatDatetime } from '../format.js';
import { confirmDialog, Dialog } from '../ui/dialog.js';
import { ApiKeyDialog } from './api-key-dialog.js';
import { CredentialStatus, isUsable } from './credential-status.js';
import { OneTimeSecret } from './one-time-secret.js';
import { useRemoteList } from './remote-list.js';
import { ScreenHeader } from './screen-header.js';

/**
 * @typedef {{id: number, name: string, prefix: string, service_account: {id: number, display_name: string} | null,
 *   created_date: string, last_used_at: string | null, expires_at: string | null, revoked_at: string | null}} ApiKeyRow
 */

/** @param {{session: {lang?: string}}} props */
export function ApiKeysScreen({ session }) {
  const lang = session?.lang;
  const keys = useRemoteList('/api/api-keys');
  const rows = /** @type {ApiKeyRow[] | null} */ (keys.items);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState(/** @type {{name: string, key: string} | null} */ (null));

  /** @param {ApiKeyRow} row */
  const revoke = async (row) => {
    const sure = await confirmDialog({
      title: 'Revoke API key?',
      message: `Programs using “${row.name}” (${row.prefix}…) are refused from their next request. This cannot be undone.`,
      confirm: 'Revoke', danger: true,
    });
    if (!sure) return;
    try {
      await api.del(`/api/api-keys/${row.id}`, undefined, {});
      window.fieldforge?.toast.show({ type: 'success', message: `API key “${row.name}” revoked.` });
    } catch (err) {
      window.fieldforge?.toast.show({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
    await keys.reload();
  };

  /** @param {string | null} iso */
  const when = (iso) => (iso ? formatDatetime(iso, lang) : null);
  const newButton = html`<button type="button" class="ff-button ff-button-primary" onClick=${() => setCreating(true)}>New</button>`;

  return html`<section class="ff-settings-screen" aria-labelledby="ff-api-keys-title">
    <${ScreenHeader} id="ff-api-keys-title" title="API Keys" actions=${keys.error ? null : newButton}
      intro=${html`Programs call the API with a key: <code>Authorization: Bearer ff_…</code>. Each key acts as a service account of its own, in the groups chosen when it was created.`} />
    ${keys.error ? html`<p class="ff-settings-problem" role="alert">${keys.error}</p>` : null}
    ${rows === null && !keys.error ? html`<p role="status">Loading…</p>` : null}
    ${rows && !rows.length ? html`<p class="ff-settings-empty">No API keys yet. Create one with <strong>New</strong>.</p>` : null}
    ${rows && rows.length ? html`<div class="ff-settings-table-wrap">
      <table class="ff-table ff-settings-table" aria-label="API keys">
        <thead><tr>
          <th scope="col">Name</th><th scope="col">Key</th><th scope="col">Service account</th><th scope="col">Created</th>
          <th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="ff-visually-hidden">Actions</span></th>
        </tr></thead>
        <tbody>
          ${rows.map((/** @type {ApiKeyRow} */ row) => {
            const state = { revoked: row.revoked_at !== null, expiresAt: row.expires_at };
            return html`<tr key=${row.id} class=${isUsable(state) ? '' : 'ff-settings-row-ended'}>
              <td>${row.name}</td>
              <td><code>${row.prefix}…</code></td>
              <td>${row.service_account?.display_name ?? '—'}</td>
              <td>${when(row.created_date)}</td>
              <td>${when(row.last_used_at) ?? html`<span class="ff-settings-muted">Never</span>`}</td>
              <td>${when(row.expires_at) ?? html`<span class="ff-settings-muted">Never</span>`}</td>
              <td><${CredentialStatus} ...${state} /></td>
              <td class="ff-settings-actions-cell">${row.revoked_at === null
                ? html`<button type="button" class="ff-button ff-button-danger" aria-label=${`Revoke ${row.name}`} onClick=${() => revoke(row)}>Revoke</button>`
                : null}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>` : null}
    ${creating ? html`<${ApiKeyDialog} onClose=${() => setCreating(false)}
      onCreated=${(/** @type {{name: string, key: string}} */ key) => { setCreating(false); setCreated(key); void keys.reload(); }} />` : null}
    ${created ? html`<${Dialog} title="API key created" onClose=${() => setCreated(null)}
      footer=${html`<button type="button" class="ff-button ff-button-primary" onClick=${() => setCreated(null)}>Done</button>`}>
      <p>The key “${created.name}” is ready.</p>
      <${OneTimeSecret} label="API key" value=${created.key}
        warning="Copy it now and keep it somewhere safe: FieldForge stores only a fingerprint of it and cannot show it again. If it is lost, revoke it and create another." />
    <//>` : null}
  </section>`;
}
