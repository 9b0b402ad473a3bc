/**
 * Field values assigned in model code that are not written yet. `task.priority = '2'` (in a setter,
 * an API method, a wizard, a compute helper) updates the record at once — it reads back the new
 * value — and queues the write; the queue is flushed before the next SQL statement of the unit of
 * work runs and before it commits (as Odoo flushes its cache), so queries always see what was
 * assigned and nothing assigned is lost. A flush writes through the ordinary write path
 * (`writeRecords`: rights, rules, `_check_change`, relations, setters, recomputes), as the
 * environment the assignment was made in (elevated or not), one call per model and set of values:
 * the same value assigned to 500 records is one UPDATE.
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

/** Writes the values of a model's records (the ORM's `writeRecords`), then reloads the records. */
export type FlushWriter = (meta: ModelMeta, ids: readonly number[], vals: Record<string, unknown>, env: Env) => Promise<void>;
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
   * Writes everything queued: one `write` per environment, model and identical set of values.
   * The queue is emptied first, so what the write path runs (statements, setters assigning more
   * fields) queues afresh and is flushed by its own next statement.
   */
  async flush(write: FlushWriter, reload: FlushReloader): Promise<void> {
    while (this.assignments.size) {
      const taken = [...this.assignments.values()];
      this.assignments.clear();
      const groups = new Map<string, { env: Env; meta: ModelMeta; vals: Record<string, unknown>; records: Model[] }>();
      const envIds = new Map<Env, number>();
      for (const a of taken) {
        if (!envIds.has(a.env)) envIds.set(a.env, envIds.size);
        const key = `${envIds.get(a.env)}\u0000${a.meta.name}\u0000${stableJson(a.vals)}`;
        const group = groups.get(key);
        if (group) group.records.push(a.record);
        else groups.set(key, { env: a.env, meta: a.meta, vals: a.vals, records: [a.record] });
      }
      for (const { env, meta, vals, records } of groups.values()) {
        await write(meta, [...new Set(records.map((r) => r.id))], vals, env);
      }
      // What the writes recomputed (a total, a stored computed field) is what the records now read.
      const byModel = new Map<ModelMeta, { env: Env; records: Model[] }>();
      for (const { env, meta, records } of groups.values()) {
        const entry = byModel.get(meta) ?? byModel.set(meta, { env, records: [] }).get(meta)!;
        entry.records.push(...records);
      }
      for (const [meta, { env, records }] of byModel) await reload(meta, records, env);
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
