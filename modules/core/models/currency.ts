import { Model, UserError, ValidationError, fields, roundToStep } from 'fieldforge';
import { Company } from './company.js';

/** Today as `YYYY-MM-DD` in UTC: the same day the filter variable `today` means. */
function todayIso(): string {
  return new Date().toISOString().slice(0, 10);
}

/**
 * An ISO 4217 currency (spec §2.3). Every code is seeded inactive by `data/currencies.ts`; one
 * becomes active when a company takes it as its base currency (`Company.currency`) or when it is
 * switched on (`active: true`). Being archivable by `active`, queries and pickers (`name_search`)
 * list only active currencies; model code reads the others with `with_archived()`, and a
 * ManyToOne shows its currency whether active or not.
 *
 * A `Monetary` field names the ManyToOne holding its currency (`currency_field`, in the registry);
 * a client displays the amount with that currency's `symbol`, `position` and `rounding`, reading
 * them with the record (`fields: ['amount', 'currency.symbol', 'currency.rounding',
 * 'currency.position']`). Amounts never convert by themselves: `CurrencyRate.convert` does.
 */
export class Currency extends Model {
  static override _verbose_name = 'Currency';
  static override _order_by = ['name ASC'];
  static override _unique_together = [['name']];
  // "dollar" finds USD, CAD, AUD… in a picker, not only the code.
  static override _name_search_fields = ['name', 'plural'];
  static override fields = {
    name: fields.Char({ max_length: 3, required: true, description: 'ISO 4217 code' }),
    symbol: fields.Char({ max_length: 10 }),
    rounding: fields.Float({ precision: 6, default: 0.01, description: 'Smallest amount: 10^-minor units' }),
    active: fields.Boolean({ default: false }),
    position: fields.Selection({ choices: ['Before', 'After'], default: 'Before', description: 'Symbol before or after the amount' }),
    plural: fields.Char({ max_length: 255 }),
  };

  declare name: string;
  declare symbol: string | null;
  declare rounding: number | null;
  declare active: boolean | null;
  declare position: 'Before' | 'After' | null;
  declare plural: string | null;

  /** `amount` rounded half away from zero to this currency's `rounding` (unchanged when unset). Pure. */
  round(amount: number): number {
    return roundToStep(amount, this.rounding);
  }
}

/**
 * The rate of a currency for one company on one day: 1 unit of `currency` = `rate` units of the
 * company's currency. `get_rate` and `convert` read them as the caller (company isolation applies:
 * rates of a company the caller cannot see do not exist for it).
 */
export class CurrencyRate extends Model {
  static override _verbose_name = 'Currency Rate';
  static override _order_by = ['date DESC'];
  static override _unique_together = [['currency', 'company', 'date']];
  static override _rec_name = 'date';
  static override fields = {
    currency: fields.ManyToOne('Currency', { related_name: 'rates', on_delete: 'CASCADE', required: true }),
    company: fields.ManyToOne('Company', { related_name: 'currency_rates', on_delete: 'CASCADE', required: true }),
    date: fields.Date({ required: true, index: true, default: todayIso }),
    rate: fields.Float({ precision: 10, required: true, description: '1 unit of the currency in company-currency units' }),
    inverse_rate: fields.Float({ precision: 10, calculate: 'calc_inverse_rate', store: true, depends: ['rate'] }),
  };

  declare date: string;
  declare rate: number | null;
  declare inverse_rate: number | null;

  /** 1 unit of the company currency in this currency; null rather than Infinity for a zero rate. */
  calc_inverse_rate(): number | null {
    return this.rate ? 1 / this.rate : null;
  }

  /**
   * The most recent rate of `currency_id` for `company_id` on or before `as_of_date` (default
   * today); 1.0 for the company's own currency, and 1.0 when no rate exists.
   */
  static async get_rate(currency_id: number, company_id: number, as_of_date?: string | Date | null): Promise<number> {
    return rateOf(currency_id, company_id, asDate(as_of_date), await companyCurrencyId(company_id));
  }

  /**
   * `amount * from_rate / to_rate`, both rates of `company_id` as of `as_of_date` (default today);
   * `amount` unchanged when the currencies are equal; `UserError` when the target rate is zero.
   * Not rounded: the spec gives the exact formula, and the caller knows whether it needs the
   * target's precision (`(await Currency.get(to)).round(result)`) or full precision for a further
   * computation.
   */
  static async convert(
    amount: number, from_currency_id: number, to_currency_id: number, company_id: number, as_of_date?: string | Date | null,
  ): Promise<number> {
    if (from_currency_id === to_currency_id) return amount;
    const date = asDate(as_of_date);
    const own = await companyCurrencyId(company_id);
    const fromRate = await rateOf(from_currency_id, company_id, date, own);
    const toRate = await rateOf(to_currency_id, company_id, date, own);
    if (toRate === 0) throw new UserError(`The rate of the target currency (${to_currency_id}) is zero: cannot convert`);
    return (amount * fromRate) / toRate;
  }
}

/** `get_rate` once the date and the company's own currency are known. */
async function rateOf(currency_id: number, company_id: number, date: string, own: number | null): Promise<number> {
  if (currency_id === own) return 1.0;
  const [found] = await CurrencyRate.query({ currency: currency_id, company: company_id, date__lte: date })
    .order_by('date DESC').limit(1).read(['rate']);
  return typeof found?.rate === 'number' ? found.rate : 1.0;
}

/** The id of the company's base currency (an archived company still has one). */
async function companyCurrencyId(company_id: number): Promise<number | null> {
  const [row] = await Company.query({ id: company_id }).with_archived().read(['currency']);
  return (row?.currency as { id: number } | null | undefined)?.id ?? null;
}

/** `as_of_date` as `YYYY-MM-DD`: a Date, a date string, or today when absent. */
function asDate(value: string | Date | null | undefined): string {
  if (value === undefined || value === null || value === '') return todayIso();
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new ValidationError('as_of_date is not a valid date');
    return value.toISOString().slice(0, 10);
  }
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw new ValidationError(`as_of_date must be YYYY-MM-DD, got ${JSON.stringify(value)}`);
  return value.slice(0, 10);
}
