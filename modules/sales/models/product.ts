import { Model, currentEnv, fields, modelOf } from 'fieldforge';
// Type-only imports from core: they vanish at runtime; the classes themselves are reached by name
// (`modelOf`), so this module works wherever it is installed from.
import type { Company } from '../../core/models/company.js';
import type { Currency } from '../../core/models/currency.js';
import type { UoM } from '../../core/models/uom.js';

/** The company currency of the creating user: a new product is priced in it unless told otherwise. */
async function companyCurrency(): Promise<number | null> {
  const companyId = currentEnv().companyId;
  if (!companyId) return null;
  const [company] = await modelOf<typeof Company>('Company').query({ id: companyId }).read(['currency']);
  return (company?.currency as { id: number } | null | undefined)?.id ?? null;
}

/** Units (core's base unit of the Unit category): what a product is sold by unless told otherwise. */
async function unitsUoM(): Promise<number | null> {
  const [unit] = await modelOf<typeof UoM>('UoM').query({ identifier: 'core.uom_unit' }).ids();
  return unit ?? null;
}

/**
 * Something sold: priced per `uom` in `currency` (`list_price`, a Monetary amount rounded to that
 * currency). An order line may sell it in another unit of the same category (grams of a product
 * priced per kg): the line's unit price is converted (SaleOrderLine.calc_price_unit).
 */
export class Product extends Model {
  static override _verbose_name = 'Product';
  static override _order_by = ['name ASC'];
  // A picker finds a product by its internal reference too ("FURN-001").
  static override _name_search_fields = ['name', 'default_code'];
  static override fields = {
    name: fields.Char({ required: true }),
    default_code: fields.Char({ label: 'Internal reference', max_length: 64, index: true }),
    description: fields.Text(),
    uom: fields.ManyToOne('UoM', { label: 'Unit of measure', required: true, on_delete: 'RESTRICT', default: unitsUoM }),
    list_price: fields.Monetary({ label: 'Sales price', currency_field: 'currency', default: 0 }),
    currency: fields.ManyToOne('Currency', { required: true, on_delete: 'RESTRICT', default: companyCurrency }),
    // No company: shared by every company (Odoo's default); set one to keep a product to it.
    company: fields.ManyToOne('Company', { on_delete: 'SET NULL' }),
    active: fields.Boolean({ default: true }),
  };

  declare name: string;
  declare list_price: number | null;
  declare uom: Promise<UoM | null>;
  declare currency: Promise<Currency | null>;
}
