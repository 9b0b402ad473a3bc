/**
 * Settings > General > API Reference (CONTRACTS C2): links that open this database's API
 * reference (`/api-docs`) to whoever holds them, without an account. `New` creates one and shows
 * its address once, with a Copy button; `Revoke` asks first, then the link and every browser it
 * was opened in are refused at once. Administrators' screen.
 */
import { html } from '../../lib/html.js';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { formatDatetime } from '../format.js';
import { confirmDialog, Dialog } from '../ui/dialog.js';
import { ApiDocsShareDialog } from './api-docs-share-dialog.js';
import { CredentialStatus, isUsable } from './credential-status.js';
import { OneTimeSecret } from './one-time-secret.js';
import { useRemoteList } from './remote-list.js';
import { ScreenHeader } from './screen-header.js';

/**
 * @typedef {{id: number, name: string, expires_at: string | null, active: boolean, last_used_at: string | null,
 *   created_date: string, created_by: {id: number, display_name: string | null} | null}} ShareRow
 */

/** @param {{session: {lang?: string}}} props */
export function ApiReferenceScreen({ session }) {
  const lang = session?.lang;
  const shares = useRemoteList('/api/api-docs-shares');
  const rows = /** @type {ShareRow[] | null} */ (shares.items);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState(/** @type {{name: string, url: string} | null} */ (null));

  /** @param {ShareRow} row */
  const revoke = async (row) => {
    const sure = await confirmDialog({
      title: 'Revoke API reference link?',
      message: `Whoever holds the link “${row.name}” can no longer open the API reference, including browsers that opened it already. This cannot be undone.`,
      confirm: 'Revoke', danger: true,
    });
    if (!sure) return;
    try {
      await api.del(`/api/api-docs-shares/${row.id}`, undefined, {});
      window.fieldforge?.toast.show({ type: 'success', message: `Link “${row.name}” revoked.` });
    } catch (err) {
      window.fieldforge?.toast.show({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
    await shares.reload();
  };

  /** @param {string | null} iso */
  const when = (iso) => (iso ? formatDatetime(iso, lang) : null);
  const newButton = html`<button type="button" class="ff-button ff-button-primary" onClick=${() => setCreating(true)}>New</button>`;

  return html`<section class="ff-settings-screen" aria-labelledby="ff-api-reference-title">
    <${ScreenHeader} id="ff-api-reference-title" title="API Reference" actions=${shares.error ? null : newButton}
      intro="A link opens the reference of this database's API — every model, field and route — to whoever holds it, without an account. It shows no data." />
    ${shares.error ? html`<p class="ff-settings-problem" role="alert">${shares.error}</p>` : null}
    ${rows === null && !shares.error ? html`<p role="status">Loading…</p>` : null}
    ${rows && !rows.length ? html`<p class="ff-settings-empty">No links yet. Create one with <strong>New</strong>.</p>` : null}
    ${rows && rows.length ? html`<div class="ff-settings-table-wrap">
      <table class="ff-table ff-settings-table" aria-label="API reference links">
        <thead><tr>
          <th scope="col">Name</th><th scope="col">Created</th><th scope="col">Created by</th><th scope="col">Last used</th>
          <th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="ff-visually-hidden">Actions</span></th>
        </tr></thead>
        <tbody>
          ${rows.map((row) => {
            const state = { revoked: !row.active, expiresAt: row.expires_at };
            return html`<tr key=${row.id} class=${isUsable(state) ? '' : 'ff-settings-row-ended'}>
              <td>${row.name}</td>
              <td>${when(row.created_date)}</td>
              <td>${row.created_by?.display_name ?? '—'}</td>
              <td>${when(row.last_used_at) ?? html`<span class="ff-settings-muted">Never</span>`}</td>
              <td>${when(row.expires_at) ?? html`<span class="ff-settings-muted">Never</span>`}</td>
              <td><${CredentialStatus} ...${state} /></td>
              <td class="ff-settings-actions-cell">${row.active
                ? html`<button type="button" class="ff-button ff-button-danger" aria-label=${`Revoke ${row.name}`} onClick=${() => revoke(row)}>Revoke</button>`
                : null}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>` : null}
    ${creating ? html`<${ApiDocsShareDialog} onClose=${() => setCreating(false)}
      onCreated=${(/** @type {{name: string, url: string}} */ share) => { setCreating(false); setCreated(share); void shares.reload(); }} />` : null}
    ${created ? html`<${Dialog} title="API reference link created" onClose=${() => setCreated(null)}
      footer=${html`<a class="ff-button" href=${created.url} target="_blank" rel="noopener noreferrer">Open</a>
        <button type="button" class="ff-button ff-button-primary" onClick=${() => setCreated(null)}>Done</button>`}>
      <p>The link “${created.name}” is ready.</p>
      <${OneTimeSecret} label="Link" value=${created.url}
        warning="Copy it now: the link holds a secret token that FieldForge stores only as a fingerprint and cannot show again. Anyone with the link can read the API reference until it expires or is revoked." />
    <//>` : null}
  </section>`;
}
