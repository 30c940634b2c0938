// Statistics and Markdown tables for the benches.

/** Nearest-rank quantile. */
export const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
export const median = (xs) => quantile(xs, 0.5);
export const summary = (xs) => ({ n: xs.length, p50: median(xs), p90: quantile(xs, 0.9), p99: quantile(xs, 0.99), min: Math.min(...xs), max: Math.max(...xs) });

/** `sides` rotated by `i`: interleaved measures take the sides in a different order each round. */
export const rotate = (sides, i) => sides.map((_, k) => sides[(k + i) % sides.length]);

export const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
export const signed = (x, digits = 1) => (Number.isFinite(x) ? `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(digits)}` : 'n/a');

/** A target check: `value` against a bound; met is undefined when there is no target or no value. */
export function target(value, op, bound, text) {
  const met = !Number.isFinite(value) ? undefined : op === '<=' ? value <= bound : value >= bound;
  return { text, met, value, bound, op };
}
const metText = (t) => (!t ? '—' : t.met === undefined ? 'n/a' : t.met ? 'met' : '**not met**');

/**
 * A Markdown table: `columns` are the header cells; each row is { cells: [...], target?: target(...) }, to
 * which a "target" and a "met?" column are appended.
 */
export function table(title, columns, rows, notes = []) {
  const lines = [`### ${title}`, '', `| ${[...columns, 'target', 'met?'].join(' | ')} |`, `|${'---|'.repeat(columns.length + 2)}`];
  for (const r of rows) lines.push(`| ${[...r.cells, r.target?.text ?? '—', metText(r.target)].join(' | ')} |`);
  if (notes.length) lines.push('', ...notes);
  return lines.join('\n') + '\n';
}
