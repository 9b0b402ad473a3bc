import { Model, fields } from 'fieldforge';

/** A step of the order pipeline (Quotation → Sent → Sales Order …), ordered by `sequence`. */
export class SaleStage extends Model {
  static override _verbose_name = 'Sales Stage';
  static override _order_by = ['sequence ASC', 'id ASC'];
  static override fields = {
    name: fields.Char({ required: true, max_length: 64 }),
    sequence: fields.Integer({ default: 10 }),
    is_confirmed: fields.Boolean({ default: false, description: 'Orders in this stage are confirmed sales, not quotations' }),
    is_cancelled: fields.Boolean({ default: false, description: 'Orders in this stage are cancelled (SaleOrder.action_cancel moves them here)' }),
    fold: fields.Boolean({ default: false, description: 'Shown folded in pipeline views' }),
  };

  declare name: string;
  declare sequence: number;
  declare is_confirmed: boolean;
  declare is_cancelled: boolean;
}
