import { useEffect, useMemo, useRef } from "preact/hooks";
import uPlot, { type AlignedData, type Options } from "uplot";
import { DECISIONS } from "../../../src/schemas/vocabulary";

/**
 * A uPlot chart that follows its container's width. uPlot draws on a canvas, which a screen
 * reader cannot read: `title` names it (`role="img"`), and each page shows the same numbers
 * as text or a table beside it.
 */
export function Chart({
  title,
  options,
  data,
  height = 260,
}: {
  title: string;
  options: Omit<uPlot.Options, "width" | "height">;
  data: uPlot.AlignedData;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(200, Math.floor(element.clientWidth));
    const plot = new uPlot({ ...options, width: width(), height }, data, element);
    const resized = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    resized.observe(element);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [options, data, height]);
  return <div class="chart" role="img" aria-label={title} ref={box} />;
}

// The pages' charts, on Chart. Options and data are memoized on the numbers: Chart draws
// again whenever either changes identity.

type Decision = (typeof DECISIONS)[number];
type Matrix = Record<Decision, Record<Decision, number>>;
const SHORT: Record<Decision, string> = { approve: "A", review: "R", deny: "D" };

/**
 * The nine cells of a decision matrix as bars: unchanged decisions (the diagonal) in one
 * series, changed ones in another, so that what a policy changes stands out.
 */
export function DecisionChangeChart({ matrix, label }: { matrix: Matrix; label: string }) {
  const shape = JSON.stringify(matrix);
  const { options, data } = useMemo(() => {
    const cells = DECISIONS.flatMap((from) => DECISIONS.map((to) => ({ from, to })));
    const xs = cells.map((_, index) => index);
    const unchanged = cells.map(({ from, to }) => (from === to ? matrix[from][to] : null));
    const changed = cells.map(({ from, to }) => (from === to ? null : matrix[from][to]));
    const bars = uPlot.paths.bars?.({ size: [0.6, 64] });
    const options: Omit<Options, "width" | "height"> = {
      scales: {
        x: { time: false, range: [-0.5, cells.length - 0.5] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [
        {
          splits: () => xs,
          values: (_u, splits) =>
            splits.map((i) => {
              const cell = cells[i];
              return cell ? `${SHORT[cell.from]}→${SHORT[cell.to]}` : "";
            }),
        },
        {},
      ],
      series: [
        { label: "recorded → replayed" },
        {
          label: "Unchanged",
          fill: "#8aa4c8",
          stroke: "#3b5b8c",
          paths: bars,
          points: { show: false },
        },
        {
          label: "Changed",
          fill: "#e0915a",
          stroke: "#a2521c",
          paths: bars,
          points: { show: false },
        },
      ],
      cursor: { show: false },
      legend: { live: false },
    };
    return { options, data: [xs, unchanged, changed] as unknown as AlignedData };
  }, [shape]);
  return (
    <>
      <Chart title={label} options={options} data={data} />
      <p class="muted">A approve, R review, D deny: recorded → replayed.</p>
    </>
  );
}

/** An agent's trust score over time, as steps (it changes at events, not in between). */
export function TrustChart({
  points,
  label,
}: {
  points: { time: number; score: number }[];
  label: string;
}) {
  const shape = JSON.stringify(points);
  const { options, data } = useMemo(() => {
    const sorted = [...points].sort((a, b) => a.time - b.time);
    // The last score holds until now: the step runs on to the present (at least a minute, so
    // that a lone event still draws a line on a readable time axis).
    const last = sorted.at(-1);
    if (last) sorted.push({ time: Math.max(Date.now() / 1000, last.time + 60), score: last.score });
    const options: Omit<Options, "width" | "height"> = {
      scales: { y: { range: [0, 100] } },
      series: [
        {},
        {
          label: "Trust score",
          stroke: "#3b5b8c",
          width: 2,
          paths: uPlot.paths.stepped?.({ align: 1 }),
        },
      ],
      axes: [{}, { label: "score" }],
      legend: { live: false },
    };
    const data: AlignedData = [sorted.map((p) => p.time), sorted.map((p) => p.score)];
    return { options, data };
  }, [shape]);
  return <Chart title={label} options={options} data={data} />;
}
