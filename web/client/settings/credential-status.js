/**
 * The state of a key or a share link as a badge: revoked, expired (its date has passed) or active.
 */
import { html } from '../../lib/html.js';

/** @param {{revoked: boolean, expiresAt: string | null}} props */
export function CredentialStatus({ revoked, expiresAt }) {
  if (revoked) return html`<span class="ff-badge ff-badge-danger">Revoked</span>`;
  if (expiresAt && Date.parse(expiresAt) <= Date.now()) return html`<span class="ff-badge ff-badge-warning">Expired</span>`;
  return html`<span class="ff-badge ff-badge-success">Active</span>`;
}

/** Whether a credential still opens anything. @param {{revoked: boolean, expiresAt: string | null}} state */
export function isUsable({ revoked, expiresAt }) {
  return !revoked && !(expiresAt && Date.parse(expiresAt) <= Date.now());
}
