/** Where the benchmarks' databases live. */

/** The PostgreSQL server the benchmarks use: BENCH_DATABASE_URL, else DATABASE_URL, else the local one. */
export const BENCH_BASE_URL = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** The connection string of database `name` on the server of `base` (user `postgres` unless it names one). */
export function databaseUrl(name: string, base: string = BENCH_BASE_URL): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  if (!url.username && !url.searchParams.has('user')) url.username = 'postgres';
  return url.href;
}
