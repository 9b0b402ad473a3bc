/**
 * A module whose API methods run long statements, for tests of timeouts and of a database server
 * lost mid-request: `SlowProbe.sleep({seconds})` runs `pg_sleep`, `SlowProbe.note_then_sleep({name,
 * seconds})` writes a record, sleeps, then writes another (a failure in between must leave neither).
 * Its statements go through `runSql`, as model code's raw SQL does.
 */
import { fileURLToPath } from 'node:url';
import { adminAccessYaml, writeProbeModule } from './probe-module.js';

export const SLOW_PROBE = 'slow_probe';

/** Absolute imports: the probe lives in a temporary directory, outside this package. */
const KYSELY = fileURLToPath(new URL('../../node_modules/kysely/dist/esm/index.js', import.meta.url));
const RUN_SQL = fileURLToPath(new URL('../../src/orm/execute-sql.ts', import.meta.url));

const MODELS = `
import { Model, fields } from 'fieldforge';
import { sql } from ${JSON.stringify(KYSELY)};
import { runSql } from ${JSON.stringify(RUN_SQL)};

export class SlowProbe extends Model {
  static override _api_methods = ['sleep', 'note_then_sleep'];
  static override fields = { name: fields.Char({ required: true }) };

  static async sleep(inputs: { seconds: number }) {
    await runSql(sql\`SELECT pg_sleep(\${inputs.seconds})\`);
    return 'awake';
  }

  static async note_then_sleep(inputs: { name: string; seconds: number }) {
    await this.create({ name: inputs.name });
    await runSql(sql\`SELECT pg_sleep(\${inputs.seconds})\`);
    await this.create({ name: inputs.name + ' (after)' });
    return 'done';
  }
}
`;

/** Writes the module `slow_probe` under `root` (pass `root` to the module catalog, then install it). */
export function writeSlowProbe(root: string): Promise<void> {
  return writeProbeModule(root, SLOW_PROBE, { 'models/index.ts': MODELS, 'security/access.yaml': adminAccessYaml(['SlowProbe']) });
}
