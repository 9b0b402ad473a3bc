// @ts-check
/**
 * Rounding to a step (a unit's or a currency's `rounding`: 0.01, 0.001, 0.25, 5), half away from
 * zero as Odoo does, ignoring binary noise: 2.675 / 0.01 is 267.49999999999997 in binary, so the
 * quotient is trimmed to 15 significant digits first (2.675 → 2.68). Never returns -0. A missing
 * or zero step leaves the value as it is. Shared by units of measure, currencies, Monetary fields
 * and the formatting helpers, so an amount rounds the same way everywhere — in the browser too:
 * plain JavaScript with JSDoc types, served as it is under `/web/shared/orm/round-to-step.js`
 * (src/http/routes/web-assets.ts), so it must stay free of Node and of TypeScript syntax.
 */

/**
 * @param {number} value
 * @param {number | null | undefined} step
 * @returns {number}
 */
export function roundToStep(value, step) {
  if (!step || !Number.isFinite(value)) return value;
  const size = Math.abs(step);
  const steps = Number((Math.abs(value) / size).toPrecision(15));
  const rounded = Math.sign(value) * Math.floor(steps + 0.5) * size;
  const result = Number(rounded.toFixed(decimalsOf(size)));
  return result === 0 ? 0 : result;
}

/**
 * Decimal places of a step (0.001 → 3, 0.25 → 2, 5 → 0), at most 15.
 * @param {number} step
 */
function decimalsOf(step) {
  for (let d = 0; d < 15; d++) {
    const scaled = step * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-9 * scaled) return d;
  }
  return 15;
}
