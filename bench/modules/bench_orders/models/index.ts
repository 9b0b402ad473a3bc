// The only place bench_orders' model files are registered.
export * from './bench_order.js';
