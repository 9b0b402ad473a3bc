/**
 * How both engines hand column values to JavaScript: a `date` stays its `YYYY-MM-DD` text (a JS
 * Date would shift it by the process time zone); everything else keeps the drivers' defaults.
 */
import pg from 'pg';

const DATE_OID = 1082;

export const pgliteParsers: Record<number, (value: string) => unknown> = {
  [DATE_OID]: (value) => value,
};

export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === DATE_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;
