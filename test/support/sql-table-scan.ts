/**
 * Finds where TypeScript source writes SQL against given tables, with the TypeScript parser (so a
 * table name in a comment, a message or a response header is no finding):
 *
 * - `table`: a table named in the text of an SQL template (`sql\`…\``, any tag ending in `sql`)
 *   where SQL takes a table — after FROM, JOIN, UPDATE, INTO, TABLE, ONLY or REFERENCES, bare or
 *   quoted — or as a quoted literal (`to_regclass('public.module')`);
 * - `helper`: a table named by a string literal given to `sql.id`, `sql.ref`, `sql.raw`, `sql.lit`
 *   or to a Kysely builder (`selectFrom`, `insertInto`, `updateTable`, `deleteFrom`, `mergeInto`);
 * - `interpolated`: a table interpolated into raw SQL — any `sql.table(…)`, and `sql.id`/`sql.ref`
 *   given some `.table` — whichever table it is (its name comes from metadata or a constant).
 */
import ts from 'typescript';

export type FindingKind = 'table' | 'helper' | 'interpolated';

export interface Finding {
  line: number;
  kind: FindingKind;
  /** What was found: the table, or the helper call's text. */
  what: string;
}

const TABLE_POSITION = String.raw`\b(?:FROM|JOIN|UPDATE|INTO|TABLE|ONLY|REFERENCES)\s+`;
const HELPERS = new Set(['id', 'ref', 'raw', 'lit']);
const BUILDERS = new Set(['selectFrom', 'insertInto', 'updateTable', 'deleteFrom', 'mergeInto']);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Matches any of `tables` in a table position of SQL text; group 1 or 2 is the table. */
function tablePattern(tables: Iterable<string>): RegExp {
  const names = [...tables].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
  return new RegExp(`${TABLE_POSITION}(?:"(${names})"|(${names})(?![\\w"]))|'(?:public\\.)?(${names})'`, 'gi');
}

/** The literal pieces of a template (what surrounds its `${…}`), each with where it starts. */
function templatePieces(template: ts.TemplateLiteral): { text: string; start: number }[] {
  if (ts.isNoSubstitutionTemplateLiteral(template)) return [{ text: template.text, start: template.getStart() }];
  return [template.head, ...template.templateSpans.map((s) => s.literal)].map((piece) => ({ text: piece.text, start: piece.getStart() }));
}

function isSqlTag(tag: ts.Expression): boolean {
  return /sql$/i.test(tag.getText());
}

/** `sql.table(…)`: the helper name when the callee is `<…sql>.<name>`. */
function sqlHelper(call: ts.CallExpression): string | null {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee) || !/sql$/i.test(callee.expression.getText())) return null;
  return callee.name.text;
}

function stringValue(node: ts.Node): string | null {
  return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : null;
}

/** `meta.table`, `field.join.table`: a table name taken from metadata. */
function isTableProperty(node: ts.Node): boolean {
  return ts.isPropertyAccessExpression(node) && node.name.text === 'table';
}

export function scanSqlTables(fileName: string, source: string, tables: ReadonlySet<string>): Finding[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const lower = new Set([...tables].map((t) => t.toLowerCase()));
  const pattern = tablePattern(tables);
  const findings: Finding[] = [];
  const lineOf = (pos: number) => file.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(node) && isSqlTag(node.tag)) {
      for (const { text, start } of templatePieces(node.template)) {
        for (const m of text.matchAll(pattern)) {
          // The match's line: the piece's, plus the line breaks before the match.
          const line = lineOf(start) + (text.slice(0, m.index).match(/\n/g)?.length ?? 0);
          findings.push({ line, kind: 'table', what: (m[1] ?? m[2] ?? m[3])! });
        }
      }
    }
    if (ts.isCallExpression(node)) {
      const helper = sqlHelper(node);
      const callee = node.expression;
      const builder = ts.isPropertyAccessExpression(callee) && BUILDERS.has(callee.name.text) ? callee.name.text : null;
      if (helper === 'table') {
        findings.push({ line: lineOf(node.getStart()), kind: 'interpolated', what: node.getText() });
      } else if ((helper && HELPERS.has(helper)) || builder) {
        const named = node.arguments.map(stringValue).find((v) => v !== null && lower.has(v.split('.').at(-1)!.replace(/"/g, '').toLowerCase()));
        if (named) findings.push({ line: lineOf(node.getStart()), kind: 'helper', what: named });
        else if ((helper === 'id' || helper === 'ref') && node.arguments.some(isTableProperty)) {
          findings.push({ line: lineOf(node.getStart()), kind: 'interpolated', what: node.getText() });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return findings;
}
