/**
 * A package loaded on first use instead of at start: what an API-key request never needs (token
 * signing, password hashing, report templates, the embedded engine…) stays out of the start
 * (issue 15). `load()` imports it once; a failed import rejects every call with its own error.
 * `loaded` is the module once that resolved: synchronous code, and hot paths that should not
 * await, read it from there.
 */
export class LazyModule<M> {
  loaded: M | undefined;
  #loading: Promise<M> | undefined;

  constructor(private readonly importModule: () => Promise<M>) {}

  load(): Promise<M> {
    return (this.#loading ??= this.importModule().then((module) => (this.loaded = module)));
  }

  /** The module, which `load()` must have loaded already (a programming error otherwise). */
  get(): M {
    if (!this.loaded) throw new Error('A lazily loaded module was used before load() resolved');
    return this.loaded;
  }
}
