import { Model, fields } from 'fieldforge';

/**
 * A person or a company. A person points to the company they work for with `parent`; the company
 * lists them in `children` (the reverse field the registry creates from `related_name`).
 */
export class Contact extends Model {
  static override _verbose_name = 'Contact';
  static override _order_by = ['name ASC'];
  static override _name_search_fields = ['name', 'email'];
  static override fields = {
    name: fields.Char({ required: true }),
    is_company: fields.Boolean({ default: false }),
    parent: fields.ManyToOne('Contact', {
      label: 'Works for',
      related_name: 'children',
      on_delete: 'SET NULL',
      // Only offer companies as employers; `filter` limits the choices, it does not block writes.
      filter: 'Q(is_company=True)',
    }),
    job_title: fields.Char(),
    email: fields.Char({ max_length: 255, index: true }),
    phone: fields.Char({ max_length: 64 }),
    mobile: fields.Char({ max_length: 64 }),
    website: fields.Char(),
    street: fields.Char(),
    city: fields.Char(),
    zip: fields.Char({ max_length: 16 }),
    notes: fields.Text(),
    tags: fields.ManyToMany('ContactTag', { related_name: 'contacts' }),
    // The company (core `Company`) that owns this record — the hook for multi-company isolation.
    // Not to be confused with `parent`, the contact's own employer.
    company: fields.ManyToOne('Company', { on_delete: 'SET NULL' }),
    // A Boolean `active` makes the model archivable: queries hide inactive contacts by default.
    active: fields.Boolean({ default: true }),
    user: fields.ManyToOne('User', { label: 'Platform user', on_delete: 'SET NULL' }),
  };
}
