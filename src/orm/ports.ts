/**
 * What a unit of work needs from the layers above the ORM, declared here as interfaces and
 * provided from above (the platform, a request): the realtime bus, the file storage, the
 * record-changed feed and the request guard. The ORM names no realtime, files or auth module,
 * so those may build on it without the ORM building on them.
 */
import type { SqlFragment } from '../db/sql-fragment.js';
import type { RecordChangeFeed } from './record-changes.js';

/**
 * A frame for every socket of one user of one database (CONTRACTS C4, `{type, data}`), or for the
 * sockets watching one record except some users' (a message's viewers who do not follow it).
 */
export interface UserPush {
  readonly db: string;
  readonly to:
    | { readonly user: number }
    | { readonly users: readonly number[] }
    | { readonly viewersOf: { readonly model: string; readonly id: number }; readonly exceptUsers: readonly number[] };
  readonly frame: {
    readonly type: 'realtime_data' | 'notification' | 'activity_update' | 'error';
    readonly data: Readonly<Record<string, unknown>>;
  };
}

/** A frame for the live-chat visitor sockets of one session (spec §6.4). */
export interface VisitorPush {
  readonly db: string;
  readonly to: { readonly visitorsOf: number };
  readonly frame: { readonly type: 'message' | 'closed'; readonly [field: string]: unknown };
}

/** The realtime bus as units of work use it (`realtime/bus.ts`). */
export interface BusPort {
  /** Sends now, fire-and-forget: never throws, never returns a promise. */
  publish(message: UserPush | VisitorPush): void;
  /** Who is online (spec §6.2): live chat assigns a new session to an online agent. */
  readonly presence: { online(db: string): Promise<number[]> };
}

/** The file storage as the write path uses it (`files/file-service.ts`). */
export interface FileStorePort {
  /** Largest upload in bytes (`FF_UPLOAD_LIMIT`). */
  readonly uploadLimit: number;
  /**
   * Releases the stored bytes of attachments `ids`, about to be deleted: queued in the current
   * transaction, removed after the commit (through `UnitOfWork.afterCommit`).
   */
  releaseAttachments(ids: readonly number[]): Promise<void>;
}

/** A remembered credential the database has yet to confirm (`auth/request-guard.ts`). */
export interface RequestGuardPort {
  /** True until a statement proved the check passed. */
  pending: boolean;
  /** The check, for a select list or a statement of its own; raises `GUARD_SQLSTATE` unless still valid. */
  call(): SqlFragment<boolean>;
  /**
   * The same check as a plain expression, for the select list of a read: true when still valid,
   * false or null otherwise (it raises nothing, so the reader must refuse the rows: `runGuarded`).
   */
  inline(): SqlFragment<boolean>;
}

/** The ports of one unit of work; null: none (install, CLI, a bare test environment). */
export interface EnvPorts {
  /** Socket pushes (`realtime/send.ts`); null: pushes go nowhere. */
  readonly bus: BusPort | null;
  /** The platform's file storage; null: none. */
  readonly files: FileStorePort | null;
  /** Where changed records are reported after commit (record-changed pings); null: nowhere. */
  readonly changeFeed: RecordChangeFeed | null;
  /** The request's pending credential check, shared by every Env of the request; null: none. */
  readonly guard: RequestGuardPort | null;
}
