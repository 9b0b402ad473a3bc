/**
 * Modules written by tests: a directory `<root>/<id>` with a manifest depending on core and the
 * given files (relative paths → contents). Pass `root` to `testDatabase(set, [root])`, then install.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export async function writeProbeModule(root: string, id: string, files: Record<string, string>): Promise<void> {
  const dir = join(root, id);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.yaml'), `name: ${id}\nidentifier: ${id}\ndependencies: [core]\n`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

/** ModelAccess rows (YAML) giving administrators every right on `models`. */
export function adminAccessYaml(models: readonly string[]): string {
  return models.map((m) => `- data_type: ModelAccess
  identifier: access_${m.toLowerCase()}_admin
  name: ${m} / administrators
  model: ${m}
  group: core.group_admin
  read_perm: true
  write_perm: true
  create_perm: true
  delete_perm: true
`).join('');
}
