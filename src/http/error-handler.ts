/**
 * Renders every error as `{detail, error}` (plus `traceback` in dev mode) with the status its
 * class declares. Errors of our catalogue say what they are; Fastify's own request errors (bad
 * JSON, too large, wrong media type) keep their status; anything else is a 500 that leaks nothing.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { FieldForgeError } from '../errors.js';

const FASTIFY_ERROR_NAMES: Record<number, string> = {
  400: 'BadRequest', 404: 'NotFound', 405: 'MethodNotAllowed', 413: 'PayloadTooLarge', 415: 'UnsupportedMediaType',
};

export function installErrorHandler(app: FastifyInstance, dev: boolean): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    let status: number;
    let body: Record<string, unknown>;
    if (err instanceof FieldForgeError) {
      status = err.status;
      reply.headers(err.headers);
      body = { detail: err.message, error: err.name };
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      const detail = status === 413 ? 'The request body is larger than the configured limit (FF_BODY_LIMIT)' : err.message;
      body = { detail, error: FASTIFY_ERROR_NAMES[status] ?? 'BadRequest' };
    } else {
      status = 500;
      req.log.error({ err }, 'unhandled error');
      body = { detail: 'Internal server error', error: 'InternalError' };
    }
    if (dev && err.stack) body.traceback = err.stack;
    void reply.status(status).send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.status(404).send({ detail: `No route ${req.method} ${req.url.split('?')[0]}`, error: 'NotFound' });
  });
}
