/**
 * Units of measure (spec §2.2). A unit's `factor` is the number of its category's base units in
 * one of it (kg base: g 0.001, t 1000), so every conversion goes source → base → target.
 *
 * One base unit per category is a partial unique index (`_unique_when`), not a check in code: two
 * concurrent requests each seeing "no base unit yet" would both pass a SELECT-then-INSERT check,
 * while the index makes the second wait for the first and then fail. Its violation is the
 * `ValidationError` below, from the API, the ORM and data files alike.
 *
 * Decided where the spec is silent:
 * - A category may hold no base unit for a while: it is created before its units, and the API
 *   creates one record at a time, so "exactly one" cannot be demanded of every intermediate state
 *   (Odoo demands the reference unit first; that needs a check after each write this platform has
 *   no hook for, and cannot be made concurrency-safe by an index). What is refused is a *second*
 *   base unit. Conversions do not need the flag: factors are relative to the base whether or not
 *   a unit carries it. The seed data gives every category exactly one (tested).
 * - A unit without a category takes part in no rule: any number of them may be base units (NULLs
 *   are distinct in the index), and they convert only to other units without a category.
 * - Rounding is half-up, away from zero (2.5 → 3, −2.5 → −3), as Odoo's `float_round`: quantities
 *   are commercial, not statistical, so banker's rounding would surprise (0.5 unit → 0). The
 *   quotient `qty / rounding` is first cut to 15 significant digits, so binary noise does not
 *   decide the result (1.005 at 0.01 → 1.01, 0.1 + 0.2 at 0.01 → 0.3), and the result carries the
 *   rounding's decimals exactly (0.3, not 0.30000000000000004).
 * - `convert_to_base` returns `qty * factor` as rule 3 says, 0 for a zero factor; `convert`
 *   refuses a zero factor on either side (`UserError`), since a unit worth nothing would silently
 *   turn any quantity into 0.
 * - `convert_to_base` rounds with this unit's rounding — the only one known without I/O (rule 7);
 *   `convert(qty, base)` rounds with the base unit's.
 */
import { Model, fields, roundToStep, UserError } from 'fieldforge';

export class UoMCategory extends Model {
  static override _table = 'uom_category'; // not the automatic 'uo_m_category'
  static override _verbose_name = 'Unit of Measure Category';
  static override _order_by = ['name ASC'];
  static override fields = {
    name: fields.Char({ max_length: 50, required: true }),
    // `uoms` (OneToMany) comes from UoM.category's related_name.
  };
  declare name: string;
  declare uoms: Promise<UoM[]>;
}

export class UoM extends Model {
  static override _table = 'uom'; // not the automatic 'uo_m'
  static override _verbose_name = 'Unit of Measure';
  static override _order_by = ['name ASC'];
  static override _unique_together = [['name', 'category']];
  static override _unique_when = [{
    fields: ['category'],
    when: 'is_base_uom',
    message: 'A unit of measure category can have only one base unit; unset the current base unit first',
  }];
  static override fields = {
    name: fields.Char({ max_length: 50, required: true }),
    category: fields.ManyToOne('UoMCategory', { related_name: 'uoms', on_delete: 'SET NULL' }),
    factor: fields.Float({ default: 1.0, description: 'Number of base units equal to one of this unit' }),
    rounding: fields.Float({ precision: 6, default: 0.001 }),
    is_base_uom: fields.Boolean({ default: false }),
  };
  declare name: string;
  declare category: Promise<UoMCategory | null>;
  declare factor: number;
  declare rounding: number | null;
  declare is_base_uom: boolean;

  /** `qty` rounded half-up to a multiple of `rounding`; unchanged when `rounding` is unset or 0. No I/O. */
  round_qty(qty: number): number {
    return roundHalfUp(qty, this.rounding);
  }

  /** `qty` of this unit in base units (`qty * factor`). No I/O. */
  convert_to_base(qty: number, round_result = true): number {
    const base = qty * this.factor;
    return round_result ? this.round_qty(base) : base;
  }

  /** `qty` base units in this unit (`qty / factor`). No I/O. */
  convert_from_base(qty: number, round_result = true): number {
    this.assertFactor();
    const own = qty / this.factor;
    return round_result ? this.round_qty(own) : own;
  }

  /** `qty` of this unit in `to_uom` (a record or its id), rounded with `to_uom`'s rounding. */
  async convert(qty: number, to_uom: UoM | number, round_result = true): Promise<number> {
    const target = typeof to_uom === 'number' ? await UoM.get(to_uom) : to_uom;
    if (!this.sharesCategory(target)) {
      throw new UserError(`Cannot convert from '${this.name}' to '${target.name}': the units belong to different categories`);
    }
    if (target.id === this.id && this.id != null) return round_result ? target.round_qty(qty) : qty;
    this.assertFactor();
    return target.convert_from_base(this.convert_to_base(qty, false), round_result);
  }

  /** True when both units share a category, or both have none. */
  async is_compatible(other_uom: UoM | number): Promise<boolean> {
    const other = typeof other_uom === 'number' ? await UoM.get(other_uom) : other_uom;
    return this.sharesCategory(other);
  }

  /** Compares the loaded category ids: no query, even for units loaded apart. */
  private sharesCategory(other: UoM): boolean {
    return (this._values.category ?? null) === (other._values.category ?? null);
  }

  private assertFactor(): void {
    if (!this.factor) throw new UserError(`The unit of measure '${this.name}' has a conversion factor of 0`);
  }
}

/** Half-up (away from zero) rounding to a multiple of `rounding`; see the module comment. */
export function roundHalfUp(qty: number, rounding: number | null | undefined): number {
  return roundToStep(qty, rounding);
}
