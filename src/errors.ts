/**
 * The one error catalogue. Every error the platform raises on purpose is a `FieldForgeError`
 * that knows its wire name (`error`) and HTTP status; the HTTP layer renders `{detail, error}`
 * from it and never builds error bodies by hand. Anything else is an internal error (500).
 */
export class FieldForgeError extends Error {
  /** HTTP status this error maps to. */
  readonly status: number = 500;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Record<string, string> = {};

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A business rule was violated by the data (unique, required, RESTRICT, a model check). When the
 * refusal is about one field of one model (`{field: 'zip', model: 'Contact'}`), the error body
 * names the field (`field`) for a request on that model, so a form shows the message at the input.
 */
export class ValidationError extends FieldForgeError {
  override readonly status = 400;
  /** The refused field, when the refusal is about one field. */
  readonly field?: string;
  /** The model owning `field` (a nested line's model differs from the request's). */
  readonly fieldModel?: string;

  constructor(message: string, about: { field?: string; model?: string } = {}) {
    super(message);
    if (about.field) this.field = about.field;
    if (about.model) this.fieldModel = about.model;
  }
}

/** The operation cannot be done as asked (unit conversion across categories, …). */
export class UserError extends FieldForgeError {
  override readonly status = 400;
}

/** A request parameter is malformed (wrong type, unknown option, bad paging). */
export class BadRequest extends FieldForgeError {
  override readonly status = 400;
}

/** A filter expression or ordering entry could not be parsed or resolved. */
export class QuerySyntaxError extends FieldForgeError {
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
  override readonly status = 401;
}

/** Authenticated, but not allowed. */
export class AccessError extends FieldForgeError {
  override readonly status = 403;
}

/** Unknown record, model or route target. */
export class NotFound extends FieldForgeError {
  override readonly status = 404;
}

/** The selected database does not exist. */
export class DatabaseNotFound extends FieldForgeError {
  override readonly status = 404;
}

/** The request body is larger than allowed. */
export class PayloadTooLarge extends FieldForgeError {
  override readonly status = 413;
}

/**
 * The database is busy with other work — installing or upgrading modules, a lock held longer than
 * `FF_LOCK_TIMEOUT`, a transaction this one conflicted with — or a clone source has other sessions;
 * clients retry after 5 seconds.
 */
export class DatabaseBusy extends FieldForgeError {
  override readonly status = 503;
  override readonly headers = { 'Retry-After': '5' };
}

/**
 * The database server cannot be reached: it is restarting, shut down, refusing connections or out
 * of connection slots. Nothing of the request is known to have been written; pools reconnect by
 * themselves once the server is back, so clients retry after a few seconds.
 */
export class DatabaseUnavailable extends FieldForgeError {
  override readonly status = 503;
  override readonly headers = { 'Retry-After': '5' };
}

/**
 * A statement of the request ran longer than the statement timeout (`FF_STATEMENT_TIMEOUT`) and
 * PostgreSQL cancelled it, rolling the request back. Retrying the same request would take as long,
 * so no `Retry-After`: the request must ask for less, or the operator allow more.
 */
export class StatementTimeout extends FieldForgeError {
  override readonly status = 503;
}

/**
 * The realtime bus (Redis) cannot be reached right now (presence cannot be read); it reconnects by
 * itself, so clients retry after a few seconds. Pushes never fail this way: they are fire-and-forget.
 */
export class RealtimeUnavailable extends FieldForgeError {
  override readonly status = 503;
  override readonly headers = { 'Retry-After': '5' };
}

/** A module set cannot be resolved (missing dependency, cycle, bad manifest). */
export class ModuleError extends FieldForgeError {
  override readonly status = 400;
}
