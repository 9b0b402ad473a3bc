/**
 * Which database a request is for (ARCHITECTURE §2): the `X-DB-NAME` header; else the host's
 * first label when it names a database; else the only database, when there is exactly one.
 * Never the body. A malformed name is a 400, an unknown one a 404 (`DatabaseNotFound`).
 */
import type { FastifyRequest } from 'fastify';
import { BadRequest, DatabaseNotFound } from '../errors.js';
import { assertValidDatabaseName, isValidDatabaseName } from '../db/database-name.js';
import type { Engine } from '../db/engine.js';
import { noteSelectedDatabase } from './request-log.js';

const LIST_TTL_MS = 5_000;

export class DatabaseSelector {
  private cached: { at: number; names: Promise<string[]> } | null = null;

  constructor(private readonly engine: Engine) {}

  private list(): Promise<string[]> {
    if (!this.cached || Date.now() - this.cached.at > LIST_TTL_MS) {
      this.cached = { at: Date.now(), names: this.engine.list() };
    }
    return this.cached.names;
  }

  async select(req: FastifyRequest): Promise<string> {
    const name = await this.choose(req);
    noteSelectedDatabase(req, name); // for the request's log lines, before anything can fail
    return name;
  }

  private async choose(req: FastifyRequest): Promise<string> {
    const header = req.headers['x-db-name'];
    if (header !== undefined) {
      if (Array.isArray(header)) throw new BadRequest('Send one X-DB-NAME header');
      return assertValidDatabaseName(header);
    }
    const label = (req.hostname ?? '').split('.')[0]?.toLowerCase() ?? '';
    const names = await this.list();
    if (isValidDatabaseName(label) && names.includes(label)) return label;
    if (names.length === 1) return names[0]!;
    if (!names.length) throw new DatabaseNotFound('No database exists yet');
    throw new BadRequest('Several databases exist: choose one with the X-DB-NAME header');
  }
}
