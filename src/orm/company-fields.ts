/**
 * Which fields tie a model's records to companies — model metadata that company isolation
 * (`access/`), company consistency (`write/company-consistency.ts`) and the write path all read.
 */
import { ManyToManyField, ManyToOneField } from './fields/relational-fields.js';
import type { ModelMeta } from './model-meta.js';

/** The `company` ManyToOne that puts a model under company isolation, if it has one. */
export function companyField(meta: ModelMeta): ManyToOneField | null {
  const f = meta.fields.get('company');
  return f instanceof ManyToOneField && f.target.name === 'Company' && meta.name !== 'Company' ? f : null;
}

/** The `companies` ManyToMany of a model whose records may belong to several companies, if any. */
export function companiesField(meta: ModelMeta): ManyToManyField | null {
  const f = meta.fields.get('companies');
  return f instanceof ManyToManyField && f.target.name === 'Company' ? f : null;
}

/** Fields whose values are companies — ManyToOne or ManyToMany to `Company` — on any model. */
export function companyValuedFields(meta: ModelMeta): (ManyToOneField | ManyToManyField)[] {
  return [...meta.fields.values()].filter((f): f is ManyToOneField | ManyToManyField =>
    (f instanceof ManyToOneField || f instanceof ManyToManyField) && f.target.name === 'Company');
}
