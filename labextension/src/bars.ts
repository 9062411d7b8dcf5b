/**
 * Small DOM helpers of the views: elements, byte sizes and accessible memory bars.
 */

/** The server's memory-warning threshold (`memory_warn`, `memory_critical` of `GET environment`). */
export interface IThresholds {
  warn: number;
  critical: number;
}

/** How full a bar is: "none" when no limit (or no threshold) is known yet. */
export type Level = 'ok' | 'warn' | 'critical' | 'none';

/**
 * The level of a fraction, the same rule as the notebook widget's `level()`:
 * "critical" from `critical` on, "warn" from `warn` on, else "ok".
 */
export function level(fraction: number | null, thresholds: IThresholds | null): Level {
  if (fraction === null || thresholds === null) {
    return 'none';
  }
  if (fraction >= thresholds.critical) {
    return 'critical';
  }
  return fraction >= thresholds.warn ? 'warn' : 'ok';
}

/** Human-readable bytes, e.g. `1.5 GiB`. */
export function formatBytes(value: number | null | undefined): string {
  if (value === null || value === undefined || !isFinite(value)) {
    return '?';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = value;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Create an element with a class and optional text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** What one bar shows. */
export interface IBarOptions {
  /** Short visible label, e.g. "Memory". */
  label: string;
  /** Accessible name, e.g. "GPU 0 memory". */
  name: string;
  /** Fraction in [0, 1], or null when unknown. */
  fraction: number | null;
  /** Visible detail, e.g. "1.5 GiB / 16.0 GiB"; also the bar's aria-valuetext. */
  detail: string;
  /** Colour by the memory-warning threshold (memory bars); utilisation bars pass null. */
  thresholds: IThresholds | null;
}

/**
 * A labelled horizontal bar: an ARIA meter (role, aria-valuenow/min/max, aria-label,
 * aria-valuetext) whose colour class follows the memory-warning threshold.
 */
export function bar(options: IBarOptions): HTMLElement {
  const { label, name, fraction, detail, thresholds } = options;
  const row = el('div', 'gdk-bar');
  row.appendChild(el('span', 'gdk-bar-label', label));
  const f = fraction === null ? 0 : Math.max(0, Math.min(1, fraction));
  const percent = Math.round(f * 100);
  const track = el('div', 'gdk-bar-track');
  track.setAttribute('role', 'meter');
  track.setAttribute('aria-label', name);
  track.setAttribute('aria-valuemin', '0');
  track.setAttribute('aria-valuemax', '100');
  track.setAttribute('aria-valuenow', String(percent));
  track.setAttribute(
    'aria-valuetext',
    fraction === null ? `${detail} (unknown)` : `${detail} (${percent}%)`
  );
  const lvl = thresholds === null ? 'none' : level(fraction, thresholds);
  track.dataset.level = lvl;
  const fill = el('div', `gdk-bar-fill gdk-mod-${lvl}`);
  fill.style.width = `${(f * 100).toFixed(1)}%`;
  track.appendChild(fill);
  row.appendChild(track);
  const text = el('span', 'gdk-bar-detail', detail);
  text.setAttribute('aria-hidden', 'true'); // the meter's aria-valuetext says it
  row.appendChild(text);
  return row;
}
