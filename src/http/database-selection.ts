/**
 * Which database a request is for (ARCHITECTURE §2, CONTRACTS C2), first match wins:
 *
 * 1. the `X-DB-NAME` header (programs; a malformed name is a 400, an unknown one a 404),
 * 2. the host's first label when it names a database,
 * 3. on the web pages only, the `?db=` query (the sign-in page's choice, then remembered),
 * 4. the `ff_db` cookie the web pages set from that choice (a browser's later requests),
 * 5. the only database, when there is exactly one.
 *
 * The realtime socket takes `?db=` right after the header, as strictly (`SelectOptions.socket`).
 * Never the body. A choice of 3 or 4 naming no existing database does not count (a database
 * dropped since the cookie was set): the request falls through to 5, or to the refusal.
 */
import type {} from '@fastify/cookie'; // its declarations add `cookies` to Fastify's request type
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BadRequest, DatabaseNotFound } from '../errors.js';
import { assertValidDatabaseName, isValidDatabaseName } from '../db/database-name.js';
import type { Engine } from '../db/engine.js';
import { noteSelectedDatabase } from './request-log.js';

const LIST_TTL_MS = 5_000;

/** The browser's remembered choice of database (set by `/web/login?db=NAME`). */
export const DATABASE_COOKIE = 'ff_db';
const DATABASE_COOKIE_DAYS = 365;

/** Where the choice came from; `query` and `cookie` are a browser's. */
export type DatabaseSource = 'header' | 'host' | 'query' | 'cookie' | 'only';

export type DatabaseChoice =
  | { name: string; source: DatabaseSource }
  /** Nothing chose one: `names` are the databases to choose from (none, or several). */
  | { name: null; names: string[]; refused: string | null };

export interface SelectOptions {
  /** Honour `?db=` (the web pages only: an API URL never names its database). */
  query?: boolean;
  /**
   * The realtime socket (CONTRACTS C4): `?db=` comes right after the header and counts like it —
   * malformed → 400, unknown → 404 — since a browser cannot set headers on a WebSocket.
   */
  socket?: boolean;
}

/** The database the X-DB-NAME header names (checked), or undefined without the header. */
function headerChoice(req: FastifyRequest): string | undefined {
  const header = req.headers['x-db-name'];
  if (header === undefined) return undefined;
  if (Array.isArray(header)) throw new BadRequest('Send one X-DB-NAME header');
  return assertValidDatabaseName(header);
}

export class DatabaseSelector {
  private cached: { at: number; names: Promise<string[]> } | null = null;

  constructor(private readonly engine: Engine) {}

  /** The databases there are (remembered for a few seconds). */
  list(): Promise<string[]> {
    if (!this.cached || Date.now() - this.cached.at > LIST_TTL_MS) {
      this.cached = { at: Date.now(), names: this.engine.list() };
    }
    return this.cached.names;
  }

  /** The request's database; a plain value for the common case (the header), without a promise. */
  select(req: FastifyRequest, options: SelectOptions = {}): string | Promise<string> {
    const name = headerChoice(req);
    if (name === undefined) return this.#selectChosen(req, options);
    noteSelectedDatabase(req, name);
    return name;
  }

  async #selectChosen(req: FastifyRequest, options: SelectOptions): Promise<string> {
    const choice = await this.choose(req, options);
    if (choice.name === null) {
      if (!choice.names.length) throw new DatabaseNotFound('No database exists yet');
      throw new BadRequest('Several databases exist: choose one with the X-DB-NAME header');
    }
    noteSelectedDatabase(req, choice.name); // for the request's log lines, before anything can fail
    return choice.name;
  }

  /**
   * The database and where the choice came from, or the databases to choose from when nothing
   * chose one. A bad header still throws; a `?db=` naming no database is `refused` (for the page to say so).
   */
  async choose(req: FastifyRequest, options: SelectOptions = {}): Promise<DatabaseChoice> {
    const fromHeader = headerChoice(req);
    if (fromHeader !== undefined) return { name: fromHeader, source: 'header' };
    const asked = options.socket ? (req.query as Record<string, unknown> | undefined)?.db : undefined;
    if (asked !== undefined) {
      if (typeof asked !== 'string') throw new BadRequest('Send one db query parameter');
      return { name: assertValidDatabaseName(asked), source: 'query' };
    }
    const label = (req.hostname ?? '').split('.')[0]?.toLowerCase() ?? '';
    const names = await this.list();
    if (isValidDatabaseName(label) && names.includes(label)) return { name: label, source: 'host' };
    let refused: string | null = null;
    let forget = false;
    if (options.query) {
      const asked = (req.query as Record<string, unknown> | undefined)?.db;
      if (typeof asked === 'string' && asked !== '') {
        if (isValidDatabaseName(asked) && names.includes(asked)) return { name: asked, source: 'query' };
        refused = asked;
      }
      // `?db=` left empty asks to choose again: the remembered choice does not count.
      forget = asked === '';
    }
    const remembered = forget ? undefined : req.cookies?.[DATABASE_COOKIE];
    if (remembered && isValidDatabaseName(remembered) && names.includes(remembered)) return { name: remembered, source: 'cookie' };
    if (names.length === 1) return { name: names[0]!, source: 'only' };
    return { name: null, names: [...names].sort(), refused };
  }
}

/** Forgets the browser's remembered database (`?db=` left empty: choose again). */
export function forgetDatabase(req: FastifyRequest, reply: FastifyReply): void {
  if (req.cookies?.[DATABASE_COOKIE] !== undefined) void reply.clearCookie(DATABASE_COOKIE, { path: '/' });
}

/** Remembers a database chosen on a web page (`?db=`) for the browser's later requests. */
export function rememberDatabase(req: FastifyRequest, reply: FastifyReply, name: string): void {
  if (req.cookies?.[DATABASE_COOKIE] === name) return;
  void reply.setCookie(DATABASE_COOKIE, name, {
    httpOnly: true, sameSite: 'lax', secure: req.protocol === 'https', path: '/', maxAge: DATABASE_COOKIE_DAYS * 86_400,
  });
}
