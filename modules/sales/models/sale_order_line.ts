import { Model, UserError, fields, modelOf } from 'fieldforge';
import type { Product } from './product.js';
import type { SaleOrder } from './sale_order.js';
import type { CurrencyRate } from '../../core/models/currency.js';
import type { UoM } from '../../core/models/uom.js';

/**
 * One product sold on an order: `quantity` of it in `uom`, at `price_unit` per that unit, for a
 * `subtotal` in the order's currency.
 *
 * Like Odoo's sale.order.line, the description, unit and unit price follow the product until
 * someone writes them (editable computed fields): the unit defaults to the product's, and the
 * price to the product's list price converted to the line's unit (a product at 12.00 per kg sold
 * by the gram costs 0.012 per g) and to the order's currency at the order's date. `price_unit` is a
 * Float with 6 decimals, not a Monetary: a unit price often needs more precision than the currency
 * (Odoo's "Product Price" precision); the `subtotal` is Monetary, rounded to the currency.
 * Changing the product takes its unit and price again; changing the order's currency later does
 * not reprice existing lines (Odoo's "update prices" is a deliberate action there too).
 */
export class SaleOrderLine extends Model {
  static override _verbose_name = 'Sales Order Line';
  static override _order_by = ['order ASC', 'sequence ASC', 'id ASC'];
  static override fields = {
    order: fields.ManyToOne('SaleOrder', { required: true, on_delete: 'CASCADE' }),
    sequence: fields.Integer({ default: 10 }),
    product: fields.ManyToOne('Product', { required: true, related_name: 'sale_lines', on_delete: 'RESTRICT' }),
    name: fields.Char({ label: 'Description', calculate: 'calc_name', store: true, editable: true, depends: ['product'] }),
    quantity: fields.Float({ precision: 3, default: 1 }),
    uom: fields.ManyToOne('UoM', { label: 'Unit of measure', calculate: 'calc_uom', store: true, editable: true, depends: ['product'] }),
    price_unit: fields.Float({
      label: 'Unit price', precision: 6, calculate: 'calc_price_unit', store: true, editable: true, depends: ['product', 'uom'],
    }),
    // The quantity in the product's own unit (500 g of a product sold per kg: 0.5), rounded with
    // that unit's rounding; a unit of another category is refused here (UserError).
    product_qty: fields.Float({
      label: 'Quantity in product unit', precision: 6, calculate: 'calc_product_qty', store: true,
      depends: ['quantity', 'uom', 'product.uom'],
    }),
    currency: fields.ManyToOne('Currency', { calculate: 'calc_currency', store: true, depends: ['order.currency'] }),
    // The order's company, stored on the line so company isolation applies to lines too.
    company: fields.ManyToOne('Company', { calculate: 'calc_company', store: true, depends: ['order.company'] }),
    subtotal: fields.Monetary({
      currency_field: 'currency', calculate: 'calc_subtotal', store: true, depends: ['quantity', 'price_unit'],
    }),
  };

  declare quantity: number | null;
  declare price_unit: number | null;
  declare readonly subtotal: number | null;
  declare order: Promise<SaleOrder | null>;
  declare product: Promise<Product | null>;
  declare uom: Promise<UoM | null>;

  async calc_name(): Promise<string | null> {
    return (await this.product)?.name ?? null;
  }

  async calc_uom(): Promise<number | null> {
    return (await (await this.product)?.uom)?.id ?? null;
  }

  async calc_price_unit(): Promise<number> {
    const product = await this.product;
    if (!product) return 0;
    const [productUom, lineUom] = [await product.uom, await this.uom];
    let price = Number(product.list_price ?? 0);
    // Price per product unit → per line unit: a gram costs a thousandth of a kilogram.
    if (productUom && lineUom && productUom.id !== lineUom.id) {
      if (!(await lineUom.is_compatible(productUom))) throw incompatible(lineUom, productUom);
      price = productUom.convert_from_base(lineUom.convert_to_base(price, false), false);
    }
    const order = await this.order;
    const from = (await product.currency)?.id;
    const to = (await order?.currency)?.id;
    const company = (await order?.company)?.id;
    if (from && to && from !== to && company) {
      // Converting is linear: one rate lookup per currency pair and date for all the lines computed together.
      const date = order!.date_order;
      const factor = await this.for_batch(`rate:${from}:${to}:${company}:${date}`, () =>
        modelOf<typeof CurrencyRate>('CurrencyRate').convert(1, from, to, company, date));
      price *= factor;
    }
    return Number(price.toFixed(6));
  }

  async calc_product_qty(): Promise<number> {
    const [lineUom, productUom] = [await this.uom, await (await this.product)?.uom];
    const qty = this.quantity ?? 0;
    if (!lineUom || !productUom) return qty;
    if (!(await lineUom.is_compatible(productUom))) throw incompatible(lineUom, productUom);
    return lineUom.convert(qty, productUom);
  }

  async calc_currency(): Promise<number | null> {
    return (await (await this.order)?.currency)?.id ?? null;
  }

  async calc_company(): Promise<number | null> {
    return (await (await this.order)?.company)?.id ?? null;
  }

  calc_subtotal(): number {
    return (this.quantity ?? 0) * (this.price_unit ?? 0);
  }
}

function incompatible(lineUom: UoM, productUom: UoM): UserError {
  return new UserError(`The unit '${lineUom.name}' cannot measure this product, sold by '${productUom.name}': the units belong to different categories`);
}
