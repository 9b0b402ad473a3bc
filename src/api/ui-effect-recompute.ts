/**
 * Recomputing stored computed fields on a form's drafts (`ui-effect-drafts.ts`), as saving them
 * would: the same dependency graph as writes (`registry.triggers`), the same compute methods run
 * as the platform, the same conversion and rounding to the currency — so what the form is told is
 * what a save stores — but in memory, writing nothing.
 *
 * A field changed on a draft schedules the fields depending on it: on the same record, on the
 * record it belongs to through a OneToMany's inverse (a line's subtotal → its order's total), and
 * on the lines the form holds (an order's currency → its lines' currency). Scheduled fields run in
 * dependency order (each after the computed fields it depends on, across models), so each computes
 * once; one whose value changes schedules its own dependants in turn (transitive). Longer paths — a
 * field depending on `lines.product.price`, or on records the form does not hold — are left to the
 * save, which recomputes them as usual.
 */
import { withEnv } from '../orm/env.js';
import type { Field } from '../orm/fields/field.js';
import { ManyToOneField, OneToManyField, RelationalField } from '../orm/fields/relational-fields.js';
import type { Registry } from '../orm/registry.js';
import { roundedToCurrency } from '../orm/write/monetary-rounding.js';
import { asLoaded } from '../orm/write/precompute.js';
import { sameStored, type DraftNode, type FormDrafts } from './ui-effect-drafts.js';

/** More computations than any form needs: a dependency cycle among computed fields. */
const MAX_COMPUTES = 10_000;

export class DraftRecompute {
  private readonly pending: { node: DraftNode; field: Field }[] = [];
  private readonly ranks: ReadonlyMap<Field, number>;

  constructor(private readonly drafts: FormDrafts, registry: Registry) {
    this.ranks = fieldRanks(registry);
  }

  /** Computes `field` on `node` in the next `run`, unless the node's value for it stands. */
  schedule(node: DraftNode, field: Field): void {
    if (node.kept.has(field.name) || this.pending.some((p) => p.node === node && p.field === field)) return;
    this.pending.push({ node, field });
  }

  /** Every stored computed field of a new draft, as a create computes them before its INSERT. */
  scheduleAll(node: DraftNode): void {
    for (const field of node.meta.fields.values()) {
      // Without `depends` a field is computed after the INSERT, from the id a draft does not have yet.
      if (field.isComputed && field.isStored && field.options.calculate && field.options.depends?.length) this.schedule(node, field);
    }
  }

  /** `name` changed on `node`: schedules what depends on it, wherever the form's drafts hold it. */
  async changed(node: DraftNode, name: string): Promise<void> {
    for (const t of node.meta.registry.triggers.get(`${node.meta.name}.${name}`) ?? []) {
      if (!t.prefix.length) {
        if (t.owner === node.meta) this.schedule(node, t.field);
        continue;
      }
      if (t.prefix.length !== 1) continue;
      const step = t.owner.fields.get(t.prefix[0]!);
      if (step instanceof OneToManyField && step.target === node.meta) {
        const parent = await this.drafts.parentOf(node, step);
        if (parent) this.schedule(parent, t.field);
      } else if (step instanceof ManyToOneField && step.target === node.meta) {
        for (const line of this.drafts.linesOf(node, step)) this.schedule(line, t.field);
      }
    }
  }

  /** Computes everything scheduled, lowest rank first, until nothing is left. */
  async run(): Promise<void> {
    for (let computed = 0; this.pending.length; computed++) {
      // A mistake in module code, not in the request: a plain error (a 500 that names nothing).
      if (computed > MAX_COMPUTES) throw new Error('Stored computed fields depend on each other in a cycle');
      let next = 0;
      for (let i = 1; i < this.pending.length; i++) {
        if (this.rank(this.pending[i]!.field) < this.rank(this.pending[next]!.field)) next = i;
      }
      const { node, field } = this.pending.splice(next, 1)[0]!;
      await this.compute(node, field);
    }
  }

  private rank(field: Field): number {
    return this.ranks.get(field) ?? 0;
  }

  private async compute(node: DraftNode, field: Field): Promise<void> {
    const { record, meta } = node;
    const method = field.options.calculate!;
    // As the platform, like every stored computed value, and rounded to the currency as stored.
    const [value] = await withEnv({ su: true }, async () =>
      roundedToCurrency(meta, field, [record], [await (record as unknown as Record<string, () => unknown>)[method]!()]));
    const loaded = asLoaded(field, field.toColumn(value ?? null));
    if (sameStored(record._values[field.name], loaded)) return;
    record._values[field.name] = loaded;
    // A link read before now named the old record.
    if (field instanceof RelationalField) record._batch.assigned(field, record, loaded);
    await this.changed(node, field.name);
  }
}

const RANKS = new WeakMap<Registry, Map<Field, number>>();

/**
 * Each stored computed field's depth in the dependency graph: 1 + the deepest stored computed
 * field it depends on (0 without any), across models. Computing in rank order computes each field
 * after everything it reads.
 */
function fieldRanks(registry: Registry): Map<Field, number> {
  const cached = RANKS.get(registry);
  if (cached) return cached;
  const inputs = new Map<Field, Set<Field>>();
  for (const [key, triggers] of registry.triggers) {
    const dot = key.indexOf('.');
    const source = registry.models.get(key.slice(0, dot))?.fields.get(key.slice(dot + 1));
    if (!source?.isComputed || !source.isStored) continue;
    for (const t of triggers) (inputs.get(t.field) ?? inputs.set(t.field, new Set()).get(t.field)!).add(source);
  }
  const ranks = new Map<Field, number>();
  const visiting = new Set<Field>();
  const rank = (field: Field): number => {
    const known = ranks.get(field);
    if (known !== undefined) return known;
    if (visiting.has(field)) return 0; // a cycle: the compute limit stops it
    visiting.add(field);
    let r = 0;
    for (const input of inputs.get(field) ?? []) if (input !== field) r = Math.max(r, rank(input) + 1);
    visiting.delete(field);
    ranks.set(field, r);
    return r;
  };
  for (const field of inputs.keys()) rank(field);
  RANKS.set(registry, ranks);
  return ranks;
}
