/**
 * Template databases: each module set is installed once per test run (global setup) and every
 * test file clones it with `CREATE DATABASE … TEMPLATE`, which takes a fraction of a second
 * instead of a full install. Each template also holds an administrator API key whose value the
 * global setup hands to the test files.
 */
export const TEMPLATE_SETS = {
  core: ['core'],
  full: ['core', 'contacts', 'project'],
  livechat: ['core', 'contacts', 'project', 'livechat'],
} as const;

export type TemplateSet = keyof typeof TEMPLATE_SETS;

export interface TemplateInfo {
  database: string;
  apiKey: string;
}

export function templateName(runId: string, set: TemplateSet): string {
  return `fftpl_${runId}_${set}`;
}
