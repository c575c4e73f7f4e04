/**
 * A small line of amounts over time, one point per payment, one of them marked: an inline SVG
 * (its attributes are SVG geometry, not `style`, so the console's CSP holds). The figures are
 * in the caller's text beside it; the picture is named by `label` for screen readers.
 */
export interface SparkPoint {
  value: number;
  marked: boolean;
}

const WIDTH = 240;
const HEIGHT = 48;
const PAD = 4;

export function Sparkline({ points, label }: { points: SparkPoint[]; label: string }) {
  if (points.length === 0) return null;
  const max = Math.max(...points.map((p) => p.value), 1);
  const step = points.length > 1 ? (WIDTH - 2 * PAD) / (points.length - 1) : 0;
  const at = (p: SparkPoint, i: number) => ({
    x: PAD + (points.length > 1 ? i * step : (WIDTH - 2 * PAD) / 2),
    y: HEIGHT - PAD - (p.value / max) * (HEIGHT - 2 * PAD),
  });
  const xy = points.map(at);
  const marked = points.findIndex((p) => p.marked);
  const mark = marked >= 0 ? xy[marked] : undefined;
  return (
    <svg
      class="sparkline"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      width={WIDTH}
      height={HEIGHT}
    >
      <polyline
        class="sparkline-line"
        fill="none"
        points={xy.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ")}
      />
      {mark ? <circle class="sparkline-mark" cx={mark.x} cy={mark.y} r="4" /> : null}
    </svg>
  );
}
