/**
 * Records of one company refer only to records of that company or of none (Odoo's
 * `check_company`), whoever writes — administrators and the platform included: an order of
 * company B cannot have a customer of company A, nor a line a product of company A. Checked after
 * the write, in SQL, over every link of the written records to a company-bound model (one
 * statement for all links and records), so values set by defaults, computes and lines are checked
 * as well as those given.
 *
 * A record's company is its `company` field; a model that also has `companies` (users: the
 * companies they may work in) belongs to all of them. A record without company may refer to
 * anything; links to `Company` itself are the allowed-companies check's (`access/record-access.ts`).
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import { ValidationError } from '../../errors.js';
import { companiesField, companyField } from '../company-fields.js';
import { withEnv } from '../env.js';
import { runSql } from '../execute-sql.js';
import { ManyToManyField, ManyToOneField } from '../fields/relational-fields.js';
import { AUDIT_FIELDS } from '../generic-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { inCondition } from '../query/filter-ast.js';
import { EMPTY_STATE } from '../query/select-plan.js';
import { buildFieldTree } from '../read/field-tree.js';
import { readTree, type Serialized } from '../read/read-records.js';

type Sql = SqlFragment;
type Link = ManyToOneField | ManyToManyField;

const companyLinksOf = new WeakMap<ModelMeta, readonly Link[]>();

/** The links of `meta` that company consistency covers (to models with a company). */
export function companyLinks(meta: ModelMeta): readonly Link[] {
  // Worked out once per model: every create and many writes ask, most to learn there are none.
  let links = companyLinksOf.get(meta);
  if (!links) {
    const isLink = (f: unknown): f is Link => (f instanceof ManyToOneField && f.column !== null) || f instanceof ManyToManyField;
    links = !companyField(meta) ? [] : [...meta.fields.values()].filter(isLink).filter((f) =>
      !(AUDIT_FIELDS as readonly string[]).includes(f.name) && f.target.name !== 'Company' && companyField(f.target) !== null);
    companyLinksOf.set(meta, links);
  }
  return links;
}

/** Whether writing `fieldNames` can break consistency (the company, or a covered link, changes). */
export function touchesCompanyLinks(meta: ModelMeta, fieldNames: Iterable<string>): boolean {
  const links = companyLinks(meta);
  if (!links.length) return false;
  for (const name of fieldNames) if (name === 'company' || links.some((l) => l.name === name)) return true;
  return false;
}

/** Throws a `ValidationError` naming the field and both companies when a record of `ids` breaks the rule. */
export async function assertCompanyConsistency(meta: ModelMeta, ids: readonly number[]): Promise<void> {
  const links = companyLinks(meta);
  if (!links.length || !ids.length) return;
  const own = sql.id('r', companyField(meta)!.column!);
  const parts = links.map((link, i) => {
    const target = link.target;
    const from = link instanceof ManyToOneField
      ? sql`${sql.table(meta.table)} r JOIN ${sql.table(target.table)} t ON t.id = r.${sql.id(link.column!)}`
      : sql`${sql.table(meta.table)} r JOIN ${sql.table(link.join.table)} j ON j.${sql.id(link.join.sourceColumn)} = r.id
          JOIN ${sql.table(target.table)} t ON t.id = j.${sql.id(link.join.targetColumn)}`;
    return sql`SELECT ${i}::int AS link, r.id AS record, t.id AS target FROM ${from}
      WHERE r.id = ANY(${[...ids]}::int[]) AND ${own} IS NOT NULL AND ${mismatch(target, own)}`;
  });
  const [clash] = await runSql<{ link: number; record: number; target: number }>(
    sql`${sql.join(parts, sql` UNION ALL `)} LIMIT 1`);
  if (clash) throw await describeClash(meta, links[clash.link]!, clash.record, clash.target);
}

/** True (in SQL) when the target row `t` belongs to companies and `company` is not one of them. */
function mismatch(target: ModelMeta, company: Sql): Sql {
  const single = sql.id('t', companyField(target)!.column!);
  const multi = companiesField(target);
  if (!multi) return sql`(${single} IS NOT NULL AND ${single} <> ${company})`;
  const j = multi.join;
  const memberOf = (c: Sql) => sql`EXISTS (SELECT 1 FROM ${sql.table(j.table)} m
    WHERE m.${sql.id(j.sourceColumn)} = t.id AND m.${sql.id(j.targetColumn)} = ${c})`;
  const belongsSomewhere = sql`(${single} IS NOT NULL OR EXISTS (SELECT 1 FROM ${sql.table(j.table)} m
    WHERE m.${sql.id(j.sourceColumn)} = t.id))`;
  return sql`(${belongsSomewhere} AND ${single} IS DISTINCT FROM ${company} AND NOT ${memberOf(company)})`;
}

/** One record, archived or not, as a queryset's `read` answers it (the write path sits below querysets). */
function readById(meta: ModelMeta, id: number, paths: readonly string[]): Promise<Serialized[]> {
  return readTree(buildFieldTree(meta, paths, false), { ...EMPTY_STATE, activeTest: false, filters: [inCondition(['id'], [id])] });
}

/** The error of a clash, with names (read as the platform: the message is about the write's own data). */
async function describeClash(meta: ModelMeta, link: Link, recordId: number, targetId: number): Promise<ValidationError> {
  return withEnv({ su: true }, async () => {
    const [record] = await readById(meta, recordId, ['display_name', 'company']);
    const targetFields = companiesField(link.target) ? ['display_name', 'company', 'companies'] : ['display_name', 'company'];
    const [target] = await readById(link.target, targetId, targetFields);
    const name = (v: unknown) => `'${(v as { display_name?: string } | null)?.display_name ?? '?'}'`;
    const targetCompanies = [target?.company, ...((target?.companies as unknown[] | undefined) ?? [])]
      .filter((c) => c !== null && c !== undefined).map(name);
    const belongs = [...new Set(targetCompanies)];
    return new ValidationError(
      `${meta.verboseName} ${name(record)} belongs to company ${name(record?.company)}, but its '${link.name}' ` +
      `(${link.target.verboseName} ${name(target)}) belongs to ${belongs.length > 1 ? 'companies' : 'company'} ${belongs.join(', ')}: ` +
      'a record may only refer to records of its own company or of none',
    );
  });
}
