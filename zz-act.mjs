import pg from 'pg';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await c.connect();
const r = await c.query("select pid, datname, state, now()-query_start as dur, left(query, 120) q from pg_stat_activity where state <> 'idle' and pid <> pg_backend_pid()");
console.log(r.rows);
await c.end();
