import { Model, fields } from 'fieldforge';

/**
 * Company settings, one record per company. Modules add their switches by extending this model;
 * a field's `visible_setting` (`Q(enable_multi_currency=True)`) is evaluated against it.
 */
export class Settings extends Model {
  static override _verbose_name = 'Settings';
  static override _unique_together = [['company']];
  static override fields = {
    company: fields.ManyToOne('Company', { required: true, on_delete: 'CASCADE' }),
    // Shows foreign-currency inputs (fields with `visible_setting: 'Q(enable_multi_currency=True)'`).
    enable_multi_currency: fields.Boolean({ default: false, label: 'Multi-Currency' }),
  };
}
