/**
 * The chatter under the form of a saved record of a `_mail_thread` model (CONTRACTS C5
 * "Chatter"): a region named `Chatter` with the composer, the followers and the thread, newest
 * first, which new messages join live; the parts modules add for the model (`registry.chatterPart`);
 * and the read dwell of spec §6.5 rule 5 (`use-read-dwell.js`).
 */
import { html } from '../../lib/html.js';
import { registry } from '../registry.js';
import { Composer } from './composer.js';
import { Followers } from './followers.js';
import { Thread } from './thread.js';
import { useReadDwell } from './use-read-dwell.js';
import { useThread } from './use-thread.js';
import './stylesheet.js';

/** @param {{model: string, id: number, userId: number | null, lang?: string | null}} props */
export function Chatter({ model, id, userId, lang }) {
  const { messages, followers, error, reload, arrivals } = useThread(model, id);
  useReadDwell(model, id, arrivals);

  return html`<section class="ff-chatter" role="region" aria-label="Chatter" aria-busy=${messages === null ? 'true' : 'false'}>
    <div class="ff-chatter__top">
      <${Composer} model=${model} id=${id} onPosted=${() => void reload()} />
      <${Followers} model=${model} id=${id} followers=${followers} userId=${userId} onChanged=${reload} />
    </div>
    ${registry.chatterParts(model).map((Part) => html`<${Part} model=${model} id=${id} />`)}
    ${error ? html`<p class="ff-error-text" role="alert">${error}</p>` : null}
    ${messages === null ? html`<p class="ff-view-loading" role="status">Loading messages…</p>` : html`<${Thread} messages=${messages} lang=${lang} />`}
  </section>`;
}
