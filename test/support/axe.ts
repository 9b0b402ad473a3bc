/**
 * Accessibility checks in browser tests: axe-core (from npm, never a CDN) evaluated in the page
 * through the DevTools protocol, so the pages' strict Content-Security-Policy does not have to
 * make room for it. `seriousViolations` answers the serious and critical findings, each with its
 * rule, help text and the offending nodes' selectors, ready for a readable assertion message.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core on the page (WCAG 2.1 A/AA rules and best practices) and answers its findings of `serious` or `critical` impact. */
export async function seriousViolations(page: Page, options: { include?: string; exclude?: string[] } = {}): Promise<AxeFinding[]> {
  const loaded = await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe === 'object');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const findings = await page.evaluate(async ({ include, exclude }) => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const context = { include: include ? [include] : undefined, exclude: (exclude ?? []).map((s) => [s]) };
    const result = await axe.run(context.include ? context : { exclude: context.exclude }, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  }, { include: options.include ?? null, exclude: options.exclude ?? [] });
  return findings.filter((f) => f.impact === 'serious' || f.impact === 'critical');
}

/** A readable line per finding, for assertion messages. */
export function describeFindings(findings: AxeFinding[]): string {
  return findings.map((f) => `${f.impact} ${f.id}: ${f.help} — ${f.nodes.slice(0, 5).join(', ')}`).join('\n');
}
