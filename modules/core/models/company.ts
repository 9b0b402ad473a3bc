import { Model, fields } from 'fieldforge';
import type { Currency } from './currency.js';

export class Company extends Model {
  static override _verbose_name = 'Company';
  static override _order_by = ['name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    parent: fields.ManyToOne('Company', { related_name: 'children', on_delete: 'SET NULL' }),
    active: fields.Boolean({ default: true }),
    // Not `required`: companies made by code that predates currencies stay valid; a new database's
    // first company always gets one (`db create --currency`, default USD).
    currency: fields.ManyToOne('Currency', { on_delete: 'RESTRICT', description: 'Base currency; setting it activates the currency' }),
    // The address and contact details printed on the company's documents (report letterheads).
    street: fields.Char(),
    zip: fields.Char({ max_length: 16 }),
    city: fields.Char(),
    country: fields.ManyToOne('Country', { on_delete: 'SET NULL' }),
    email: fields.Char(),
    phone: fields.Char({ max_length: 64 }),
    // The reverse of CurrencyRate.company, declared here to gate it: a company's rates are the
    // foreign-currency inputs spec §2.3 hides unless the Multi-Currency setting is on.
    currency_rates: fields.OneToMany('CurrencyRate', 'company', { visible_setting: 'Q(enable_multi_currency=True)' }),
    // Activates the base currency. The API's create/update write through the ORM, not through
    // model methods, so no override would see them; a stored computed field depending on
    // `currency` is computed on every create and on every change of `currency`, whoever writes it
    // (API, model code, data files), and as the platform (the caller needs no right on Currency).
    currency_activated: fields.Boolean({ calculate: 'calc_currency_activated', store: true, depends: ['currency'], internal: true }),
  };

  declare currency: Promise<Currency | null>;

  async calc_currency_activated(): Promise<boolean> {
    const currency = await this.currency;
    if (!currency) return false;
    if (!currency.active) await currency.write({ active: true });
    return true;
  }
}
