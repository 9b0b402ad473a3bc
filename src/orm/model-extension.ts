/**
 * How a later module extends a model it does not own: a mixin applied on top of the composed
 * class, so overridden methods reach the previous implementation with `super`.
 *
 * ```ts
 * export const ContactSales = extendModel('Contact', (Base) => class extends Base {
 *   static fields = { sale_orders: fields.OneToMany('SaleOrder', 'customer') };
 *   override async action_archive(inputs, context) { … return super.action_archive(inputs, context); }
 * });
 * ```
 */
import type { ModelClass } from './model.js';

export interface ModelExtension {
  readonly kind: 'model-extension';
  readonly model: string;
  readonly apply: (base: ModelClass) => ModelClass;
}

export function extendModel<B extends ModelClass = ModelClass>(model: string, mixin: (base: B) => B): ModelExtension {
  return { kind: 'model-extension', model, apply: mixin as unknown as (base: ModelClass) => ModelClass };
}

export function isModelExtension(value: unknown): value is ModelExtension {
  return typeof value === 'object' && value !== null && (value as ModelExtension).kind === 'model-extension';
}
