/**
 * What the shell shows for `#model=…&id=…` (`record-link.js`) while it finds the action opening
 * that model, then the record's form in its place (the address replaced, so Back skips this
 * step); says so when no screen of this user opens such records.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { writeRoute } from '../shell/router.js';
import { actionOfModel } from './record-link.js';

/** @param {{route: Record<string, string>, menuActions: string[]}} props */
export function RecordLinkHost({ route, menuActions }) {
  const [problem, setProblem] = useState(/** @type {string | null} */ (null));
  const { model, id } = route;

  useEffect(() => {
    let live = true;
    setProblem(null);
    actionOfModel(model, menuActions).then(
      (action) => {
        if (!live) return;
        // No usable id: the model's list rather than a new record's form.
        const record = /^\d+$/.test(id ?? '') ? id : undefined;
        if (action) writeRoute({ action, view: record ? 'form' : 'list', id: record }, { replace: true });
        else setProblem('No screen of yours opens this kind of record.');
      },
      (err) => { if (live) setProblem(err instanceof Error ? err.message : String(err)); },
    );
    return () => { live = false; };
  }, [model, id]);

  if (problem) {
    return html`<section class="ff-view-problem" role="alert">
      <h1 class="ff-view-problem__title">This record cannot be opened</h1>
      <p>${problem}</p>
    </section>`;
  }
  return html`<p class="ff-view-loading" role="status">Loading…</p>`;
}
