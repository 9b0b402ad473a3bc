// The only place sales' model files are registered.
export * from './sale_stage.js';
export * from './sale_tag.js';
export * from './product.js';
export * from './sale_order.js';
export * from './sale_order_line.js';
