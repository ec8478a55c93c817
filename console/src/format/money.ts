/**
 * Money and counts as people read them. Amounts in USD: cents from a dollar up ("$250.00",
 * "$1,234.50"); below, two significant digits down to the micro-dollar the API stores ("$0.25",
 * "$0.012", "$0.00003"), so a short run on a cheap model does not read as "$0.00".
 */
const SMALLEST = 0.000001;

function usdWith(decimals: number, amount: number): string {
  return new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: decimals,
  }).format(amount);
}

export function formatUsd(amount: number): string {
  if (!Number.isFinite(amount)) return '—';
  const size = Math.abs(amount);
  if (size === 0 || size >= 1) return usdWith(2, amount);
  if (size < SMALLEST) return `< ${usdWith(6, SMALLEST)}`;
  // Two significant digits: 0.0123 → 3 decimals, 0.00003 → 6.
  const decimals = Math.min(6, 1 - Math.floor(Math.log10(size)));
  return usdWith(decimals, amount);
}

/** A count with thousands separators: 183200 → "183,200". */
export function formatCount(count: number): string {
  return new Intl.NumberFormat('en-US').format(count);
}

/** How much of `limit` `used` is, in whole percent (a limit of 0 is full at once). */
export function percentOf(used: number, limit: number): number {
  if (limit <= 0) return used > 0 ? 100 : 0;
  return Math.round((used / limit) * 100);
}
