/**
 * A behaviour one module gives every model that asks for it by a declaration flag, whichever
 * module declares the model: the messaging module's chatter (`static _mail_thread = true` on a
 * project task or a sales order gives `message_post`, followers and messages). A trait is a mixin
 * applied on top of a model's own extensions, so what it overrides reaches the model's
 * implementation with `super`.
 *
 * ```ts
 * export const MailThread = defineModelTrait('mail_thread', (cls) => cls._mail_thread === true, (Base) => class extends Base { … });
 * ```
 */
import type { ModelClass } from './model.js';

export interface ModelTrait {
  readonly kind: 'model-trait';
  /** What the trait is called in errors (`mail_thread`). */
  readonly name: string;
  /** Whether a model (its class with its extensions) takes the trait. */
  readonly applies: (cls: ModelClass) => boolean;
  readonly apply: (base: ModelClass) => ModelClass;
}

export function defineModelTrait(
  name: string,
  applies: (cls: ModelClass) => boolean,
  mixin: (base: ModelClass) => ModelClass,
): ModelTrait {
  return { kind: 'model-trait', name, applies, apply: mixin };
}

export function isModelTrait(value: unknown): value is ModelTrait {
  return typeof value === 'object' && value !== null && (value as ModelTrait).kind === 'model-trait';
}
