/**
 * Statements compiled for reuse, held per access policy (one per profile: a new security version,
 * scopes or companies make a new one, hence new statements), then per model, by the rest of their
 * key. Null marks a key whose statement cannot be reused (its build read the clock, say), so it is
 * not compiled again to learn that.
 *
 * Bounded twice: `maxShapes` keys per policy and model (the oldest goes first), and `maxTotal`
 * statements made before the whole cache is dropped and starts again — a worker remembers up to
 * 10,000 credentials, each with its own profile, so the per-profile bound alone would not bound
 * its memory (a compiled statement is a few KiB). The hot ones are compiled again at once.
 */
import type { AccessPolicy } from '../access-policy.js';
import type { ModelMeta } from '../model-meta.js';

export class CompiledCache<T> {
  #byPolicy = new WeakMap<AccessPolicy, WeakMap<ModelMeta, Map<string, T | null>>>();
  /** Statements made since `#byPolicy` was last started afresh. */
  #made = 0;

  constructor(
    private readonly maxShapes: number,
    readonly maxTotal: number,
  ) {}

  /** The statement of `key`, null when it is not reusable, undefined when not compiled yet. */
  get(access: AccessPolicy, meta: ModelMeta, key: string): T | null | undefined {
    return this.#byPolicy.get(access)?.get(meta)?.get(key);
  }

  set(access: AccessPolicy, meta: ModelMeta, key: string, compiled: T | null): void {
    if (++this.#made > this.maxTotal) {
      this.#byPolicy = new WeakMap();
      this.#made = 1;
    }
    let byModel = this.#byPolicy.get(access);
    if (!byModel) this.#byPolicy.set(access, (byModel = new WeakMap()));
    let shapes = byModel.get(meta);
    if (!shapes) byModel.set(meta, (shapes = new Map()));
    shapes.set(key, compiled);
    if (shapes.size > this.maxShapes) shapes.delete(shapes.keys().next().value as string);
  }

  /** How many reusable statements of `meta` are kept for `access`: for tests and diagnostics. */
  reusable(access: AccessPolicy, meta: ModelMeta): number {
    let n = 0;
    for (const compiled of this.#byPolicy.get(access)?.get(meta)?.values() ?? []) if (compiled) n++;
    return n;
  }
}
