import { Model, UserError, currentEnv, fields, modelOf } from 'fieldforge';
import { SaleStage } from './sale_stage.js';
import type { ModelChange } from 'fieldforge';
import type { SaleOrderLine } from './sale_order_line.js';
import type { SaleTag } from './sale_tag.js';
import type { Company } from '../../core/models/company.js';
import type { Contact } from '../../contacts/models/contact.js';
import type { User } from '../../core/models/user.js';
import type { Currency, CurrencyRate } from '../../core/models/currency.js';

const MULTI_CURRENCY = 'Q(enable_multi_currency=True)';

/** Today as `YYYY-MM-DD` (UTC, the day the filter variable `today` means). */
function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** The first stage of the pipeline: where a new quotation starts. */
async function firstStage(): Promise<number | null> {
  const stage = await SaleStage.query().order_by('sequence ASC', 'id ASC').first();
  return stage?.id ?? null;
}

/**
 * A quotation or sales order for a customer, in one currency. Lines carry the amounts
 * (`order_lines`, each with a stored `subtotal`); `amount_total` sums them, rounded to the order's
 * currency. An order in a foreign currency also shows its total in the company's currency:
 * `currency_rate` is the rate of the order's date (`CurrencyRate.get_rate`), fixed when the order
 * is created or its currency, company or date change — a rate entered later for a past date does
 * not move a past order, as in Odoo; `action_update_rate` takes the rate again.
 */
export class SaleOrder extends Model {
  static override _verbose_name = 'Sales Order';
  static override _order_by = ['date_order DESC', 'id DESC'];
  static override _unique_together = [['name']];
  static override _api_methods = ['action_confirm', 'action_cancel', 'action_update_rate', 'action_print', 'action_apply_discount'];
  // A conversation on every order (the messaging module's chatter); the salesperson follows it.
  static override _mail_thread = true;
  static override _follow_fields = ['user'];
  // The dialog of action_apply_discount (POST /api/action-meta/SaleOrder/action_apply_discount).
  static override _wizards = {
    action_apply_discount: {
      title: 'Apply a discount',
      fields: {
        discount: fields.Float({ label: 'Discount (%)', required: true, precision: 2, default: 10 }),
      },
    },
  };
  // A confirmed order is a promise to the customer: who buys, what, at which price and rate stay as
  // confirmed (Cancel it first to change them), and it cannot be confirmed again.
  static override _state_locks = [{
    when: 'Q(stage__is_confirmed=True)',
    state: 'stage',
    fields: ['customer', 'company', 'currency', 'currency_rate', 'date_order', 'order_lines'],
    methods: ['action_confirm', 'action_update_rate', 'action_apply_discount'],
  }, {
    when: 'Q(stage__is_cancelled=True)',
    state: 'stage',
    methods: ['action_cancel'],
  }];
  // Choosing a customer of one of the caller's companies puts the order in that company (form effect).
  static override _ui_effects = { customer: 'effect_customer' };
  static override fields = {
    // `S00042` from the id unless a reference is given: an editable computed field without
    // `depends` is computed once, right after the INSERT, and never again.
    name: fields.Char({ label: 'Reference', max_length: 64, calculate: 'calc_name', store: true, editable: true }),
    customer: fields.ManyToOne('Contact', { required: true, related_name: 'sale_orders', on_delete: 'RESTRICT' }),
    date_order: fields.Date({ label: 'Order date', required: true, index: true, default: today }),
    user: fields.ManyToOne('User', { label: 'Salesperson', on_delete: 'SET NULL', default: () => currentEnv().uid }),
    company: fields.ManyToOne('Company', { on_delete: 'RESTRICT', default: () => currentEnv().companyId }),
    // The company's currency unless another is chosen (a foreign-currency order).
    currency: fields.ManyToOne('Currency', {
      calculate: 'calc_company_currency', store: true, editable: true, depends: ['company'], visible_setting: MULTI_CURRENCY,
    }),
    stage: fields.ManyToOne('SaleStage', { related_name: 'orders', on_delete: 'RESTRICT', default: firstStage }),
    tags: fields.ManyToMany('SaleTag', { related_name: 'orders' }),
    order_lines: fields.OneToMany('SaleOrderLine', 'order', { label: 'Order lines' }),
    note: fields.Text({ label: 'Terms and conditions' }),
    amount_total: fields.Monetary({
      label: 'Total', currency_field: 'currency', calculate: 'calc_amount_total', store: true, depends: ['order_lines.subtotal'],
    }),
    // 1 unit of the order's currency in company-currency units, as of `date_order`.
    currency_rate: fields.Float({
      precision: 10, calculate: 'calc_currency_rate', store: true, editable: true,
      depends: ['currency', 'company', 'date_order'], visible_setting: MULTI_CURRENCY,
    }),
    company_currency: fields.ManyToOne('Currency', { calculate: 'calc_company_currency', store: true, depends: ['company.currency'] }),
    amount_total_company: fields.Monetary({
      label: 'Total in company currency', currency_field: 'company_currency', calculate: 'calc_amount_total_company',
      store: true, depends: ['amount_total', 'currency_rate'], visible_setting: MULTI_CURRENCY,
    }),
  };

  declare name: string;
  declare date_order: string;
  declare readonly amount_total: number | null;
  declare currency_rate: number | null;
  declare customer: Promise<Contact | null>;
  declare user: Promise<User | null>;
  declare company: Promise<Company | null>;
  declare currency: Promise<Currency | null>;
  declare company_currency: Promise<Currency | null>;
  declare stage: Promise<SaleStage | null>;
  declare tags: Promise<SaleTag[]>;
  declare order_lines: Promise<SaleOrderLine[]>;

  /** A confirmed sale is cancelled (moved to a stage that is not confirmed) before it can be deleted, as in Odoo. */
  static override async _check_change(change: ModelChange): Promise<void> {
    if (change.op !== 'delete') return;
    const confirmed = await this.query({ id__in: [...change.ids], stage__is_confirmed: true }).with_archived().read(['name']);
    if (confirmed.length) {
      const names = confirmed.slice(0, 5).map((o) => o.name).join(', ');
      throw new UserError(`Confirmed sales orders cannot be deleted (${names}): cancel them first`);
    }
  }

  calc_name(): string {
    return `S${String(this.id).padStart(5, '0')}`;
  }

  /** The company's currency: `company_currency` always, `currency` until another is chosen. */
  async calc_company_currency(): Promise<number | null> {
    return (await (await this.company)?.currency)?.id ?? null;
  }

  async calc_amount_total(): Promise<number> {
    // Each subtotal is already rounded to the currency; the sum is rounded again when stored.
    return (await this.order_lines).reduce((sum, line) => sum + Number(line.subtotal ?? 0), 0);
  }

  async calc_currency_rate(): Promise<number> {
    const currency = this._values.currency as number | null;
    const company = this._values.company as number | null;
    if (!currency || !company) return 1.0;
    const date = this.date_order;
    // One lookup per currency, company and date for all the orders computed together.
    return this.for_batch(`rate:${currency}:${company}:${date}`, () =>
      modelOf<typeof CurrencyRate>('CurrencyRate').get_rate(currency, company, date));
  }

  calc_amount_total_company(): number {
    return Number(this.amount_total ?? 0) * (this.currency_rate ?? 1.0);
  }

  /** Moves the order to the first confirmed stage (a quotation becomes a sales order). */
  async action_confirm(_inputs: Record<string, unknown> = {}, _context: Record<string, unknown> = {}): Promise<{ stage: number }> {
    const confirmed = await SaleStage.query('Q(is_confirmed=True)').order_by('sequence ASC', 'id ASC').first();
    if (!confirmed) throw new UserError('Cannot confirm the order: no stage is marked as confirmed. Mark one in Sales > Configuration > Stages.');
    await this.write({ stage: confirmed.id });
    return { stage: confirmed.id };
  }

  /** Moves the order to the first cancelled stage: a confirmed order is editable (and deletable) again. */
  async action_cancel(_inputs: Record<string, unknown> = {}, _context: Record<string, unknown> = {}): Promise<{ stage: number }> {
    const cancelled = await SaleStage.query('Q(is_cancelled=True)').order_by('sequence ASC', 'id ASC').first();
    if (!cancelled) throw new UserError('Cannot cancel the order: no stage is marked as cancelled. Mark one in Sales > Configuration > Stages.');
    await this.write({ stage: cancelled.id });
    return { stage: cancelled.id };
  }

  /** The Print button: answers the quotation / order PDF (a report action; several orders → one ZIP). */
  action_print(_inputs: Record<string, unknown> = {}, _context: Record<string, unknown> = {}): { type: 'report'; report: string } {
    return { type: 'report', report: 'sales.report_sale_order' };
  }

  /**
   * The discount wizard, once per selected order: lowers every line's unit price by `discount`
   * percent (a typed price, as the line keeps it: a later product change prices it again);
   * subtotals and the total follow. The dialog closes and the view reloads.
   */
  async action_apply_discount(inputs: { discount: number }, _context: Record<string, unknown> = {}): Promise<{ close: true; reload: true }> {
    const { discount } = inputs;
    if (!(discount > 0 && discount <= 100)) throw new UserError(`A discount is a percentage above 0 and at most 100 (got ${discount})`);
    for (const line of await this.order_lines) {
      line.price_unit = Number(((line.price_unit ?? 0) * (1 - discount / 100)).toFixed(6));
    }
    return { close: true, reload: true };
  }

  /**
   * Form effect of `customer`: a customer kept to one company (`Contact.company`) can only buy
   * from that company, so the order moves there — when the caller works for that company (a
   * write would refuse any other) and the salesperson, if any, does too (an order of one company
   * refers to records of that company only). The currency, rate and company totals follow as
   * computed fields.
   */
  async effect_customer(): Promise<void> {
    const customer = await this.customer;
    const company = customer?._values.company as number | null | undefined;
    const salesperson = (await this.user)?._values.company as number | null | undefined;
    const follows = salesperson === undefined || salesperson === null || salesperson === company;
    if (company && company !== this._values.company && follows && currentEnv().companyIds.includes(company)) {
      Object.assign(this, { company }); // through the field's setter, as `=` (see the type of `company`)
    }
  }

  /** Takes the rate of the order's date again (after rates were entered or corrected). */
  async action_update_rate(_inputs: Record<string, unknown> = {}, _context: Record<string, unknown> = {}): Promise<{ currency_rate: number }> {
    const rate = await this.calc_currency_rate();
    await this.write({ currency_rate: rate });
    return { currency_rate: rate };
  }
}
