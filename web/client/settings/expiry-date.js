/**
 * The optional expiry of a key or share link, as a date the person picks: sent as that day at
 * 00:00 UTC (the API's reading of a bare date), so it must be tomorrow or later.
 */

/** Tomorrow as `YYYY-MM-DD` (UTC), the earliest expiry the server accepts as a date. */
export function earliestExpiry() {
  return new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
}

/**
 * The message for an expiry that cannot be sent, or null when it is fine (empty = never expires).
 * @param {string} value `YYYY-MM-DD` or ''
 */
export function expiryProblem(value) {
  if (!value) return null;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) return 'Enter a date, or leave it empty.';
  if (value < earliestExpiry()) return 'The expiry date must be after today.';
  return null;
}
