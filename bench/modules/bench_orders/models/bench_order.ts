import { Model, fields } from 'fieldforge';

/**
 * An order as the ceiling benchmark generates them (100,000 of them): plain columns and two
 * links, no computed fields, so the benchmark measures the platform's own path and nothing a
 * model adds. No `company` field: isolation here comes from the clerks' record rule alone.
 */
export class BenchOrder extends Model {
  static override _verbose_name = 'Benchmark Order';
  static override _order_by = ['date_order DESC', 'id DESC'];
  static override fields = {
    name: fields.Char({ required: true, max_length: 64 }),
    partner: fields.ManyToOne('Contact', { required: true, on_delete: 'RESTRICT' }),
    // Indexed: the list and the count filter on it.
    state: fields.Selection({
      choices: [['draft', 'Quotation'], ['sent', 'Quotation Sent'], ['sale', 'Sales Order'], ['done', 'Locked'], ['cancel', 'Cancelled']],
      default: 'draft',
      index: true,
    }),
    date_order: fields.Date({ label: 'Order date', index: true }),
    amount_total: fields.Float({ label: 'Total', precision: 2 }),
    salesperson: fields.ManyToOne('User', { on_delete: 'SET NULL' }),
  };
}
