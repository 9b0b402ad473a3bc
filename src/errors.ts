/**
 * The one error catalogue. Every error the platform raises on purpose is a `FieldForgeError`
 * that knows its wire name (`error`) and HTTP status; the HTTP layer renders `{detail, error}`
 * from it and never builds error bodies by hand. Anything else is an internal error (500).
 *
 * Each class declares its `error` code (`static code`), so the wire does not depend on what a
 * class is called in code; `test/http/error-catalogue.test.ts` holds the list. A subclass that
 * declares no code of its own (a module's `class OutOfStock extends UserError`) is known by its
 * class name, as before. What an error is about travels on it as data — the item of a batch call
 * (`item`), the refused field (`ValidationError.field`) — never inside its message.
 */
export class FieldForgeError extends Error {
  /** The `error` of the body: stable, whatever the class is called. */
  static readonly code: string = 'FieldForgeError';
  /** HTTP status this error maps to. */
  readonly status: number = 500;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Record<string, string> = {};
  #item: number | undefined;

  constructor(message: string) {
    super(message);
    this.name = codeOf(new.target);
  }

  /**
   * The item of a batch call this error is about (`forItem`): for a bulk route its 0-based index in
   * the body, for the import the row. The message never carries it; the HTTP layer writes
   * `item <index>: ` before it in `detail` (CONTRACTS C1).
   */
  get item(): number | undefined {
    return this.#item;
  }

  /** Notes that this error is about item `index`, once: the innermost write that knows the item names it. */
  forItem(index: number): this {
    this.#item ??= index;
    return this;
  }
}

/** The wire code of an error class: its own declared `code`, else its name (a subclass outside the catalogue). */
export function codeOf(cls: abstract new (...args: never[]) => FieldForgeError): string {
  return Object.hasOwn(cls, 'code') ? (cls as unknown as typeof FieldForgeError).code : cls.name;
}

/**
 * A business rule was violated by the data (unique, required, RESTRICT, a model check). When the
 * refusal is about one field of one model (`{field: 'zip', model: 'Contact'}`), the error body
 * names the field (`field`) for a request on that model, so a form shows the message at the input.
 * A value a field refuses also says what the field expected (`expected`: `a number`), which the
 * import reports for a cell without the rest of the message.
 */
export class ValidationError extends FieldForgeError {
  static override readonly code = 'ValidationError';
  override readonly status = 400;
  /** The refused field, when the refusal is about one field. */
  readonly field?: string;
  /** The model owning `field` (a nested line's model differs from the request's). */
  readonly fieldModel?: string;
  /** What the refused field takes (`a number`, `one of a, b`), when a value was refused for its type. */
  readonly expected?: string;

  constructor(message: string, about: { field?: string; model?: string; expected?: string } = {}) {
    super(message);
    if (about.field) this.field = about.field;
    if (about.model) this.fieldModel = about.model;
    if (about.expected) this.expected = about.expected;
  }
}

/** The operation cannot be done as asked (unit conversion across categories, …). */
export class UserError extends FieldForgeError {
  static override readonly code = 'UserError';
  override readonly status = 400;
}

/** A request parameter is malformed (wrong type, unknown option, bad paging). */
export class BadRequest extends FieldForgeError {
  static override readonly code = 'BadRequest';
  override readonly status = 400;
  /** The request input the refusal is about (`name` of a new API key), when it is about one. */
  readonly field?: string;

  constructor(message: string, about: { field?: string } = {}) {
    super(message);
    if (about.field) this.field = about.field;
  }
}

/** A filter expression or ordering entry could not be parsed or resolved. */
export class QuerySyntaxError extends FieldForgeError {
  static override readonly code = 'QuerySyntaxError';
  override readonly status = 400;
  constructor(
    message: string,
    /** 0-based character offset in the source text, when known. */
    readonly position?: number,
  ) {
    super(position === undefined ? message : `${message} (at position ${position})`);
  }
}

/** Missing, malformed, unknown, revoked or expired credential. */
export class AuthenticationError extends FieldForgeError {
  static override readonly code = 'AuthenticationError';
  override readonly status = 401;
}

/** Authenticated, but not allowed. */
export class AccessError extends FieldForgeError {
  static override readonly code = 'AccessError';
  override readonly status = 403;
}

/** Unknown record, model or route target. */
export class NotFound extends FieldForgeError {
  static override readonly code = 'NotFound';
  override readonly status = 404;
}

/** The selected database does not exist. */
export class DatabaseNotFound extends FieldForgeError {
  static override readonly code = 'DatabaseNotFound';
  override readonly status = 404;
}

/** The HTTP method is not one the route answers. */
export class MethodNotAllowed extends FieldForgeError {
  static override readonly code = 'MethodNotAllowed';
  override readonly status = 405;
}

/** The request body is larger than allowed. */
export class PayloadTooLarge extends FieldForgeError {
  static override readonly code = 'PayloadTooLarge';
  override readonly status = 413;
}

/**
 * Too many requests of one kind in a short time (a live-chat visitor's messages): the client waits
 * `retryAfterSeconds` and sends again. The API itself applies no rate limits (spec §8 item 1).
 */
export class TooManyRequests extends FieldForgeError {
  static override readonly code = 'TooManyRequests';
  override readonly status = 429;
  override readonly headers: Record<string, string>;

  constructor(message: string, readonly retryAfterSeconds = 1) {
    super(message);
    this.headers = { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) };
  }
}

/** The request body's media type is not one the route reads. */
export class UnsupportedMediaType extends FieldForgeError {
  static override readonly code = 'UnsupportedMediaType';
  override readonly status = 415;
}

/**
 * The database is busy with other work — installing or upgrading modules, a lock held longer than
 * `FF_LOCK_TIMEOUT`, a transaction this one conflicted with — or a clone source has other sessions;
 * clients retry after 5 seconds.
 */
export class DatabaseBusy extends FieldForgeError {
  static override readonly code = 'DatabaseBusy';
  override readonly status = 503;
  override readonly headers = { 'Retry-After': '5' };
}

/**
 * The database server cannot be reached: it is restarting, shut down, refusing connections or out
 * of connection slots. Nothing of the request is known to have been written; pools reconnect by
 * themselves once the server is back, so clients retry after a few seconds.
 */
export class DatabaseUnavailable extends FieldForgeError {
  static override readonly code = 'DatabaseUnavailable';
  override readonly status = 503;
  override readonly headers = { 'Retry-After': '5' };
}

/**
 * A statement of the request ran longer than the statement timeout (`FF_STATEMENT_TIMEOUT`) and
 * PostgreSQL cancelled it, rolling the request back. Retrying the same request would take as long,
 * so no `Retry-After`: the request must ask for less, or the operator allow more.
 */
export class StatementTimeout extends FieldForgeError {
  static override readonly code = 'StatementTimeout';
  override readonly status = 503;
}

/**
 * The realtime bus (Redis) cannot be reached right now (presence cannot be read); it reconnects by
 * itself, so clients retry after a few seconds. Pushes never fail this way: they are fire-and-forget.
 */
export class RealtimeUnavailable extends FieldForgeError {
  static override readonly code = 'RealtimeUnavailable';
  override readonly status = 503;
  override readonly headers = { 'Retry-After': '5' };
}

/** A module set cannot be resolved (missing dependency, cycle, bad manifest). */
export class ModuleError extends FieldForgeError {
  static override readonly code = 'ModuleError';
  override readonly status = 400;
}

/**
 * Storage failures the client can act on, with a message that says nothing was saved (the unit of
 * work is rolled back with them, so no row is created): the bucket or disk refused or failed the
 * operation.
 */
export class FileStorageError extends FieldForgeError {
  static override readonly code = 'FileStorageError';
  override readonly status = 503;
}

/** The local disk of the file store is full (ENOSPC/EDQUOT): nothing was saved. */
export class InsufficientStorage extends FieldForgeError {
  static override readonly code = 'InsufficientStorage';
  override readonly status = 507;
}

/**
 * A PDF report needs a headless Chromium on the server; without one (none installed, `FF_CHROMIUM`
 * pointing nowhere, a browser that will not start) a `pdf` report is a 503 whose `detail` says how
 * to get one — an operator's fix, not the caller's, so no `Retry-After`. `html` reports never need it.
 */
export class ReportEngineUnavailable extends FieldForgeError {
  static override readonly code = 'ReportEngineUnavailable';
  override readonly status = 503;
}

/**
 * What every unexpected failure is answered as (500, `detail` "Internal server error"): the error
 * itself is only logged, never rendered.
 */
export class InternalError extends FieldForgeError {
  static override readonly code = 'InternalError';
}
