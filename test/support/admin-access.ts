/** ModelAccess rows (YAML) giving administrators every right on `models`, for probe modules written by tests. */
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
