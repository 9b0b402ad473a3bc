/**
 * A platform: the storage engine, the module catalog, the file storage, the realtime bus (and the
 * record-changed feed over it) and, per
 * database, the composed registry (shared by the databases with the same modules). A database's registry is rebuilt when its registry version moves (another
 * worker installed or upgraded a module), so every worker serves the same models. Everything a
 * unit of work needs from it (database, registry, files) is handed to the unit of work's
 * environment; nothing of it is process-wide, so several platforms may share a process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { readSettings } from '../config/settings.js';
import { fileServiceFromSettings } from '../files/filestore-config.js';
import type { FileService } from '../files/file-service.js';
import type { Engine, TenantDatabase } from '../db/engine.js';
import { installedModules, readPlatformState } from '../db/platform-state.js';
import { assertValidDatabaseName } from '../db/database-name.js';
import { dependencyOrder } from '../modules/dependency-order.js';
import { buildRegistry, installModules, type InstallRequest, type InstallResult } from '../modules/installer.js';
import type { ModuleCatalog } from '../modules/module-catalog.js';
import { transaction, type TransactionOptions } from '../orm/transaction.js';
import type { Registry } from '../orm/registry.js';
import { PdfEngine } from '../reports/pdf-engine.js';
import type { Bus } from '../realtime/bus.js';
import { InProcessBus } from '../realtime/in-process-bus.js';
import { recordChangeFeed } from '../realtime/record-changed.js';
import type { RecordChangeFeed } from '../orm/record-changes.js';
import { RecurringJobs } from './recurring-jobs.js';

interface CachedRegistry {
  version: number;
  registry: Promise<Registry>;
}

/**
 * Work a platform does once per database before it first hands the database out (`onFirstOpen`);
 * false: not done, the next open tries again.
 */
export type FirstOpenWork = (platform: Platform, name: string) => Promise<boolean>;

/**
 * The database whose first-open work runs in this call chain: its own calls pass straight through.
 * Disabled whenever no such work runs: every enabled AsyncLocalStorage costs a propagation on
 * every promise the process creates, requests included.
 */
const preparing = new AsyncLocalStorage<string>();
let preparingNow = 0;

export class Platform {
  private readonly registries = new Map<string, CachedRegistry>();
  /**
   * Registries by the modules they compose, in composition order: every database with the same
   * modules shares one, its compiled models and the plans cached on them (issue 29: a thousand
   * tenants of one product cost one registry, not a thousand). A registry is built from the code
   * alone, never from a database's rows, so sharing it changes nothing a database sees.
   */
  readonly #composed = new Map<string, Promise<Registry>>();
  #firstOpen: FirstOpenWork | null = null;
  /** Databases whose first-open work is done, and the work under way (shared by concurrent callers). */
  readonly #ready = new Set<string>();
  readonly #preparing = new Map<string, Promise<void>>();
  #files: FileService | null;
  /** Prints PDF reports: this platform's one headless Chromium, started on the first PDF (`reports/pdf-engine.ts`). */
  readonly pdf = new PdfEngine();
  /** Where units of work report the records they change (record-changed pings over the bus). */
  readonly changeFeed: RecordChangeFeed;
  /** The modules' recurring jobs, run by a serving worker once started (`recurring-jobs.ts`). */
  readonly recurringJobs = new RecurringJobs(this);

  constructor(
    readonly engine: Engine,
    readonly catalog: ModuleCatalog,
    /** Signs tokens and challenges (`config/secret.ts`); a random one per process by default (tests). */
    readonly secret: string = randomBytes(32).toString('base64url'),
    /** The file storage; read from the environment's settings on first use when not given (tests). */
    files: FileService | null = null,
    /** Socket pushes and presence between workers (`realtime/bus.ts`); in-process by default (one worker, tests). */
    readonly bus: Bus = new InProcessBus(),
  ) {
    this.#files = files;
    this.changeFeed = recordChangeFeed(bus);
    // A database dropped here or found gone by the engine (another process dropped it) takes its
    // registry with it: a new database of the same name may hold other modules.
    engine.onDatabaseGone((name) => {
      this.forget(name);
      this.#ready.delete(name);
    });
  }

  /**
   * Has `work` run once per database when this platform first opens it, before anything else of
   * the platform gets the database (`fieldforge serve`: a stale install flag, the modules marked in
   * Settings > Modules). Concurrent first callers wait for the same run; a run that throws (for
   * its callers) or answers false is tried again by the next caller.
   */
  onFirstOpen(work: FirstOpenWork): void {
    this.#firstOpen = work;
  }

  /** The platform's file storage; the sweep of one database asks the platform's other databases. */
  get files(): FileService {
    if (!this.#files) this.#files = fileServiceFromSettings(readSettings());
    this.#files.openDatabase ??= async (name) => ((await this.engine.exists(name)) ? this.database(name) : null);
    return this.#files;
  }

  async database(name: string): Promise<TenantDatabase> {
    const db = await this.engine.open(assertValidDatabaseName(name));
    if (!this.#firstOpen || this.#ready.has(name) || preparing.getStore() === name) return db;
    await this.#prepare(name, this.#firstOpen);
    // Opened again: the work may have taken long enough for the pool to be evicted meanwhile.
    return this.engine.open(name);
  }

  #prepare(name: string, work: FirstOpenWork): Promise<void> {
    let pending = this.#preparing.get(name);
    if (!pending) {
      preparingNow++;
      pending = preparing.run(name, async () => work(this, name))
        .then((done) => void (done && this.#ready.add(name)))
        .finally(() => {
          this.#preparing.delete(name);
          if (--preparingNow === 0) preparing.disable();
        });
      this.#preparing.set(name, pending);
    }
    return pending;
  }

  /** The registry of `name` at `version` (pass the version read with the request, or none to read it). */
  async registry(name: string, version?: number): Promise<Registry> {
    const db = await this.database(name);
    version ??= (await readPlatformState(db.executor)).registryVersion;
    const cached = this.registries.get(name);
    if (cached && cached.version === version) return cached.registry;
    const registry = installedModules(db.executor).then((mods) => this.#composedRegistry(mods));
    this.registries.set(name, { version, registry });
    registry.catch(() => this.registries.delete(name));
    return registry;
  }

  #composedRegistry(modules: readonly string[]): Promise<Registry> {
    const order = dependencyOrder(this.catalog, modules);
    const key = order.join(',');
    let registry = this.#composed.get(key);
    if (!registry) {
      registry = buildRegistry(this.catalog, order);
      this.#composed.set(key, registry);
      registry.catch(() => this.#composed.delete(key));
    }
    return registry;
  }

  /** The registry already built for `name` at `version`, or null (never builds one). */
  loadedRegistry(name: string, version: number): Promise<Registry> | null {
    const cached = this.registries.get(name);
    return cached && cached.version === version ? cached.registry : null;
  }

  async install(name: string, request: InstallRequest): Promise<InstallResult> {
    const result = await installModules(await this.database(name), this.catalog, request, this.files);
    this.registries.delete(name);
    return result;
  }

  /** Runs `fn` as one unit of work in database `name` (elevated unless a user is given). */
  async run<T>(name: string, options: TransactionOptions, fn: () => Promise<T>): Promise<T> {
    const db = await this.database(name);
    const state = await readPlatformState(db.executor);
    const registry = await this.registry(name, state.registryVersion);
    return transaction(db, registry, {
      su: options.uid === undefined, files: this.files, bus: this.bus, changeFeed: this.changeFeed, securityVersion: state.securityVersion, ...options,
    }, fn);
  }

  forget(name: string): void {
    this.registries.delete(name);
  }

  /** The databases this platform holds a registry of (those its requests have opened). */
  openDatabases(): string[] {
    return [...this.registries.keys()];
  }

  async close(): Promise<void> {
    this.recurringJobs.stop();
    await this.pdf.close();
    await this.bus.close();
    await this.engine.close();
  }
}
