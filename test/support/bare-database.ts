/**
 * A throwaway PostgreSQL database on the shared test server, without FieldForge's schema or
 * marker: for tests of the driver layer (`src/db`) that build their own pools on it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres';

export interface BareDatabase {
  name: string;
  /** Its connection URL. */
  url: string;
  /** Drops it, whoever is still connected. */
  drop(): Promise<void>;
}

function urlOf(database: string): string {
  const url = new URL(DATABASE_URL);
  if (!url.username) url.username = 'postgres';
  url.pathname = `/${database}`;
  return url.href;
}

/** Creates an empty database named `t_<random>_<label>`. */
export async function bareDatabase(label: string): Promise<BareDatabase> {
  const name = `t_${randomBytes(4).toString('hex')}_${label}`;
  const admin = new pg.Client({ connectionString: urlOf(new URL(DATABASE_URL).pathname.slice(1) || 'postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    await admin.end();
    throw error;
  }
  return {
    name,
    url: urlOf(name),
    async drop() {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
