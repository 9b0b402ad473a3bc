// Loaded with `node --import` in a child process: appends every module URL the process resolves to
// the file named by FF_TEST_IMPORT_LOG, for tests of what a command loads (test/cli/cli.test.ts).
import { register } from 'node:module';

register('data:text/javascript,' + encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (process.env.FF_TEST_IMPORT_LOG) appendFileSync(process.env.FF_TEST_IMPORT_LOG, resolved.url + '\\n');
  return resolved;
}
`));
