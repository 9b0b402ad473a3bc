/**
 * Who follows the record (CONTRACTS C5 "Chatter"): a `Followers` button showing how many, which
 * discloses their names, and `Follow` / `Unfollow` for the person signed in (the model's
 * `message_follow` / `message_unfollow`, no inputs). Refusals say the server's reason.
 */
import { html } from '../../lib/html.js';
import { useId, useState } from 'preact/hooks';
import { api, readAction } from '../api.js';

/**
 * @param {{model: string, id: number, followers: import('./use-thread.js').Follower[], userId: number | null,
 *   onChanged: () => Promise<void> | void}} props
 */
export function Followers({ model, id, followers, userId, onChanged }) {
  const listId = `ff-followers-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  // The person signed in is found by the user of each follower's contact (every user has one).
  const following = userId !== null && followers.some((f) => f.user_id === userId);

  const toggleFollow = async () => {
    setBusy(true);
    setError(null);
    try {
      await readAction(await api.execute(model, following ? 'message_unfollow' : 'message_follow', { ids: [id], request_body: { inputs: {} } }));
      await onChanged();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return html`<div class="ff-followers">
    <div class="ff-followers__bar">
      <button type="button" class="ff-button ff-button-small" aria-expanded=${open ? 'true' : 'false'} aria-controls=${listId}
        onClick=${() => setOpen(!open)}>Followers <span class="ff-followers__count">${followers.length}</span></button>
      <button type="button" class=${`ff-button ff-button-small${following ? '' : ' ff-button-primary'}`} disabled=${busy || userId === null}
        onClick=${toggleFollow}>${following ? 'Unfollow' : 'Follow'}</button>
    </div>
    ${error ? html`<p class="ff-error-text" role="alert">${error}</p>` : null}
    <ul id=${listId} class="ff-followers__list" aria-label="Followers" hidden=${!open}>
      ${followers.length
        ? followers.map((f) => html`<li key=${f.id}>${f.contact.display_name}${userId !== null && f.user_id === userId ? html` <span class="ff-followers__you">(you)</span>` : null}</li>`)
        : html`<li class="ff-followers__none">Nobody follows this record yet.</li>`}
    </ul>
  </div>`;
}
