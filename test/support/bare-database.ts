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
        // A client a pool let go of (released with an error) may still be closing: FORCE would
        // terminate it mid-close, and its "terminating connection" error would reach no listener.
        // So wait (up to 2 s) for the connections to go, then drop whatever is left.
        for (let waited = 0; waited < 2_000; waited += 50) {
          const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (!rows[0]?.n) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
