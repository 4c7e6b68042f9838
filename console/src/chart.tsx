import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Small SVG charts drawn by the console itself (no chart library). Each chart is one role="img" with a label that
 * says what it shows; the numbers themselves go in a table next to it for screen readers.
 */

/** Colours of series: each at least 3:1 against white (WCAG 1.4.11) and told apart from its neighbours. */
export const PALETTE = [
  '#1d4ed8',
  '#b45309',
  '#047857',
  '#9333ea',
  '#be123c',
  '#0e7490',
  '#4d7c0f',
  '#475569',
];

export interface Series {
  key: string;
  label: string;
  color: string;
}

/** 1234 → "1.2k", 0.0042 → "0.0042": short numbers for axis labels. */
export function compact(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${trim(value / 1e9)}B`;
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3)}k`;
  if (abs >= 1 || abs === 0) return trim(value);
  return String(Number(value.toPrecision(2)));
}

function trim(value: number): string {
  return String(Number(value.toFixed(value >= 100 ? 0 : 1)));
}

/** A "nice" top for an axis and its step (1, 2 or 5 times a power of ten). */
function niceScale(max: number, ticks = 4): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.25 };
  const raw = max / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  return { top: step * Math.ceil(max / step), step };
}

/** The width of an element, followed as it changes (so text in the SVG stays at its real size on a phone). */
function useWidth(fallback: number): [RefObject<HTMLDivElement>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const measure = () => setWidth(Math.max(200, Math.floor(element.clientWidth)));
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/**
 * Stacked bars: one bar per category (a day), one segment per series (a model). `values[s][c]` is series s in
 * category c. `categoryLabel` shortens the x labels.
 */
export function StackedBars({
  label,
  categories,
  series,
  values,
  format,
  categoryLabel = (c) => c,
  height = 220,
  onSegment,
}: {
  label: string;
  categories: string[];
  series: Series[];
  values: number[][];
  format: (value: number) => string;
  categoryLabel?: (category: string) => string;
  height?: number;
  /** A click on a segment (a mouse's shortcut: the same links are in the chart's table, for everyone). */
  onSegment?: (category: string, seriesKey: string) => void;
}) {
  const [ref, width] = useWidth(640);
  const totals = categories.map((_, c) =>
    series.reduce((sum, _s, s) => sum + Math.max(0, values[s]?.[c] ?? 0), 0),
  );
  const { top, step } = niceScale(Math.max(0, ...totals));
  const tickLabels: number[] = [];
  for (let v = 0; v <= top + step / 2; v += step) tickLabels.push(Number(v.toPrecision(12)));
  const left = Math.max(...tickLabels.map((t) => compact(t).length)) * 7 + 12;
  const right = 8;
  const topPad = 10;
  const bottom = 26;
  const plotW = Math.max(40, width - left - right);
  const plotH = height - topPad - bottom;
  const slot = plotW / Math.max(1, categories.length);
  const barW = Math.max(2, Math.min(40, slot * 0.72));
  const y = (v: number) => topPad + plotH - (v / top) * plotH;
  // Show as many x labels as fit: every k-th category (the last one always).
  const every = Math.max(1, Math.ceil(44 / slot));
  return (
    <div class="chart" ref={ref}>
      <svg
        role="img"
        aria-label={label}
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        focusable="false"
      >
        {tickLabels.map((t) => (
          <g key={t}>
            <line class="chart-grid" x1={left} x2={width - right} y1={y(t)} y2={y(t)} />
            <text class="chart-text" x={left - 6} y={y(t) + 4} text-anchor="end">
              {compact(t)}
            </text>
          </g>
        ))}
        {categories.map((category, c) => {
          const x = left + c * slot + (slot - barW) / 2;
          let base = 0;
          return (
            <g key={category}>
              {series.map((s, i) => {
                const v = Math.max(0, values[i]?.[c] ?? 0);
                if (v <= 0) return null;
                const y0 = y(base);
                base += v;
                const y1 = y(base);
                return (
                  <rect
                    key={s.key}
                    x={x}
                    y={y1}
                    width={barW}
                    height={Math.max(0.5, y0 - y1)}
                    fill={s.color}
                    class={onSegment ? 'chart-link' : undefined}
                    onClick={onSegment ? () => onSegment(category, s.key) : undefined}
                  >
                    <title>{`${categoryLabel(category)} · ${s.label}: ${format(v)}`}</title>
                  </rect>
                );
              })}
              {c % every === (categories.length - 1) % every ? (
                <text
                  class="chart-text"
                  // The last label ends at the edge rather than being cut by it.
                  x={c === categories.length - 1 ? width - right : left + c * slot + slot / 2}
                  y={height - 8}
                  text-anchor={c === categories.length - 1 ? 'end' : 'middle'}
                >
                  {categoryLabel(category)}
                </text>
              ) : null}
            </g>
          );
        })}
        <line class="chart-axis" x1={left} x2={width - right} y1={y(0)} y2={y(0)} />
      </svg>
      {series.length > 0 ? (
        <ul class="legend" aria-hidden="true">
          {series.map((s) => (
            <li key={s.key}>
              <span class="swatch" style={{ background: s.color }} />
              {s.label}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A line of small numbers (requests per minute); no axes, the label says what it is. */
export function Sparkline({
  label,
  values,
  height = 40,
}: {
  label: string;
  values: number[];
  height?: number;
}) {
  const width = 240;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const points = values.map(
    (v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`,
  );
  return (
    <svg
      class="sparkline"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${width} ${height}`}
      preserveAspectRatio="none"
      focusable="false"
    >
      <line
        class="chart-axis"
        x1={0}
        x2={width}
        y1={height - 1}
        y2={height - 1}
        vector-effect="non-scaling-stroke"
      />
      {values.length > 1 ? (
        <polyline
          points={points.join(' ')}
          fill="none"
          stroke="#1d4ed8"
          stroke-width={2}
          vector-effect="non-scaling-stroke"
        />
      ) : null}
    </svg>
  );
}
