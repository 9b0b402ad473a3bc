/**
 * The form and list views stay components of one concept each (issue 26 item 6): no function in
 * `web/client/views/` is over 150 lines. Measured with TypeScript's parser on the files as served.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VIEWS = join(ROOT, 'web/client/views');
const MAX_LINES = 150;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []));
}

/** `file:line name (N lines)` for every function longer than `max` lines. */
export function longFunctions(path: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      const name = node.name?.getText(source) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
      if (lines > max) found.push(`${relative(ROOT, path)}:${start + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('view components', () => {
  it(`no function in web/client/views is over ${MAX_LINES} lines`, () => {
    const long = files(VIEWS).flatMap((path) => longFunctions(path, readFileSync(path, 'utf8'), MAX_LINES));
    expect(long).toEqual([]);
  });

  it('the measure finds a long function, named, and passes a short one', () => {
    const body = Array.from({ length: 160 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    expect(longFunctions(join(VIEWS, 'sample.js'), `export function FormView() {\n${body}\n}\nconst Short = () => 1;\n`, MAX_LINES))
      .toEqual(['web/client/views/sample.js:1 FormView (162 lines)']);
  });
});
