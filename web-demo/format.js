// Numbers as the page shows them.

// 1185376 → '1.1 MB' (decimal units, as download speeds are usually given).
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return '?';
  const units = ['B', 'kB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

// Tokens per second with three significant figures, or '–' when unknown.
export function formatRate(count, seconds) {
  if (!(count > 0) || !(seconds > 0)) return '–';
  const rate = count / seconds;
  return rate >= 100 ? rate.toFixed(0) : rate.toPrecision(3);
}
