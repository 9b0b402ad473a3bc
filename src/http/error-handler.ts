/**
 * Renders every error as `{detail, error}` (plus `traceback` in dev mode) with the status its
 * class declares. Errors of our catalogue say what they are; Fastify's own request errors (bad
 * JSON, too large, wrong media type) keep their status; anything else is a 500 that leaks nothing.
 * Every `error` is the code of a class of the catalogue (`errors.ts`). What an error is about
 * travels on it as data and is written into the body here: the item of a bulk call as the
 * `item <index>: ` before `detail` (CONTRACTS C1), the refused field as `field`.
 * Each failure is logged once here (`request-log.ts`).
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { translateDatabaseError } from '../db/database-errors.js';
import {
  BadRequest, FieldForgeError, InternalError, MethodNotAllowed, NotFound, PayloadTooLarge, UnsupportedMediaType, ValidationError,
} from '../errors.js';
import { logFailure } from './request-log.js';

/** The catalogue's code for a 4xx Fastify answers by itself (any other 4xx reads as a bad request). */
const FASTIFY_ERRORS: Record<number, typeof FieldForgeError> = {
  400: BadRequest, 404: NotFound, 405: MethodNotAllowed, 413: PayloadTooLarge, 415: UnsupportedMediaType,
};

/** The body's `detail`: the message, after `item <index>: ` when it is about one item of a bulk call. */
function detailOf(err: FieldForgeError): string {
  return err.item === undefined ? err.message : `item ${err.item}: ${err.message}`;
}

/**
 * The field a refusal names, for the body's `field`: only when it is a field of the model the
 * request is about (a line's `product` refused inside an order's create is not the order's field).
 */
function refusedField(err: FieldForgeError, routeModel: unknown): string | undefined {
  if (err instanceof BadRequest) return err.field; // a request input, not a model's field
  if (!(err instanceof ValidationError) || !err.field) return undefined;
  if (err.fieldModel && typeof routeModel === 'string' && err.fieldModel !== routeModel) return undefined;
  return err.field;
}

export function installErrorHandler(app: FastifyInstance, dev: boolean): void {
  app.setErrorHandler((thrown: FastifyError, req, reply) => {
    // A database failure that arrives raw (credential look-up, registry, /auth, /filestore) is answered for what it means.
    const err = translateDatabaseError(thrown) as FastifyError;
    let status: number;
    let body: Record<string, unknown>;
    if (err instanceof FieldForgeError) {
      status = err.status;
      reply.headers(err.headers);
      body = { detail: detailOf(err), error: err.name };
      const field = refusedField(err, (req.params as { model?: unknown } | undefined)?.model);
      if (field) body.field = field;
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      // The import route has its own, larger limit: name the setting that applies.
      const setting = req.url.startsWith('/api/import/') ? 'FF_IMPORT_LIMIT' : 'FF_BODY_LIMIT';
      const detail = status === 413 ? `The request body is larger than the configured limit (${setting})` : err.message;
      body = { detail, error: (FASTIFY_ERRORS[status] ?? BadRequest).code };
    } else {
      status = 500;
      body = { detail: 'Internal server error', error: InternalError.code };
    }
    // The one log line of a failed request (a 500's stack is only here, never in its answer).
    logFailure(req, err, status, body.error as string, err instanceof FieldForgeError ? (body.detail as string) : err.message);
    if (dev && err.stack) body.traceback = err.stack;
    void reply.status(status).send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    const err = new NotFound(`No route ${req.method} ${req.url.split('?')[0]}`);
    logFailure(req, err, err.status, err.name);
    void reply.status(err.status).send({ detail: err.message, error: err.name });
  });
}
