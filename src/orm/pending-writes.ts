/**
 * Field values assigned in model code that are not written yet. `task.priority = '2'` (in a setter,
 * an API method, a wizard, a compute helper) updates the record at once — it reads back the new
 * value — and queues the write; the queue is flushed before the next SQL statement of the unit of
 * work runs and before it commits (as Odoo flushes its cache), so queries always see what was
 * assigned and nothing assigned is lost. A flush writes through the ordinary write path
 * (`writeEach`: rights, rules, `_check_change`, relations, setters, recomputes), as the
 * environment the assignment was made in (elevated or not), one write per environment and model
 * whatever the values: 500 records assigned 500 different prices are one UPDATE, like 500 records
 * assigned the same one.
 */
import type { Field } from './fields/field.js';
import type { Env } from './env.js';
import type { Model } from './model.js';
import type { ModelMeta } from './model-meta.js';

interface Assignment {
  readonly env: Env;
  readonly meta: ModelMeta;
  readonly record: Model;
  readonly vals: Record<string, unknown>;
}

/** One record and the values assigned to it. */
export interface AssignedValues {
  readonly id: number;
  readonly vals: Record<string, unknown>;
}

/** Writes each record its values (the ORM's `writeEach`), then reloads the records. */
export type FlushWriter = (meta: ModelMeta, entries: readonly AssignedValues[], env: Env) => Promise<void>;
export type FlushReloader = (meta: ModelMeta, records: readonly Model[], env: Env) => Promise<void>;

export class PendingWrites {
  /** record → its assigned values (later assignments of a field win). */
  private readonly assignments = new Map<Model, Assignment>();

  get size(): number {
    return this.assignments.size;
  }

  /** Queues `field = value` on a saved record. */
  add(env: Env, meta: ModelMeta, record: Model, field: Field, value: unknown): void {
    let entry = this.assignments.get(record);
    // The environment of the first assignment decides (a record is assigned in one place in practice).
    if (!entry) this.assignments.set(record, (entry = { env, meta, record, vals: {} }));
    entry.vals[field.name] = value;
  }

  /**
   * Writes everything queued: one write per environment and model, each record with its own
   * values (equal values share one object, so that a write of one value stays the plain UPDATE).
   * Two instances of one record (loaded twice) merge, the later assignment of a field winning.
   * The queue is emptied first, so what the write path runs (statements, setters assigning more
   * fields) queues afresh and is flushed by its own next statement.
   */
  async flush(write: FlushWriter, reload: FlushReloader): Promise<void> {
    while (this.assignments.size) {
      const taken = [...this.assignments.values()];
      this.assignments.clear();
      const groups = new Map<Env, Map<ModelMeta, { byId: Map<number, Record<string, unknown>>; records: Model[] }>>();
      for (const a of taken) {
        const byModel = groups.get(a.env) ?? groups.set(a.env, new Map()).get(a.env)!;
        const group = byModel.get(a.meta) ?? byModel.set(a.meta, { byId: new Map(), records: [] }).get(a.meta)!;
        group.byId.set(a.record.id, { ...group.byId.get(a.record.id), ...a.vals });
        group.records.push(a.record);
      }
      for (const [env, byModel] of groups) {
        for (const [meta, { byId }] of byModel) {
          const shared = new Map<string, Record<string, unknown>>();
          const entries = [...byId].map(([id, vals]) => {
            const key = stableJson(vals);
            return { id, vals: shared.get(key) ?? shared.set(key, vals).get(key)! };
          });
          await write(meta, entries, env);
        }
      }
      // What the writes recomputed (a total, a stored computed field) is what the records now read.
      for (const [env, byModel] of groups) {
        for (const [meta, { records }] of byModel) await reload(meta, records, env);
      }
    }
  }
}

/** JSON with object keys sorted: equal values give equal text whatever the assignment order. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}
