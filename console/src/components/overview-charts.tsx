/**
 * The Overview's two charts, on Chart: assessments by decision over the period and the risk
 * score histogram. Each comes with a legend of its totals that reads without hovering (uPlot's
 * own legend is off: it shows `--` until the pointer is over the plot), and the page shows
 * the numbers of each as a table beside it.
 */
import { useMemo } from "preact/hooks";
import uPlot, { type AlignedData, type Options } from "uplot";
import { DECISIONS } from "../../../src/schemas/vocabulary";
import { Chart } from "./chart";

export type Decision = (typeof DECISIONS)[number];
type Counts = Record<Decision, number>;

const COLOUR: Record<Decision, string> = {
  approve: "#1a7f37",
  review: "#9a6700",
  deny: "#cf222e",
};

/** A legend of the decisions with their totals (and share), always visible. */
export function DecisionLegend({ counts, label }: { counts: Counts; label: string }) {
  const total = counts.approve + counts.review + counts.deny;
  return (
    <ul class="legend" aria-label={label} data-testid="decision-legend">
      {DECISIONS.map((decision) => (
        <li key={decision}>
          <span class={`swatch swatch-${decision}`} aria-hidden="true" />
          {decision} <strong>{counts[decision]}</strong>
          {total > 0 && (
            <span class="muted"> ({((counts[decision] / total) * 100).toFixed(1)} %)</span>
          )}
        </li>
      ))}
      <li>
        total <strong>{total}</strong>
      </li>
    </ul>
  );
}

/**
 * Stacked bars without uPlot's bands: the series are the running sums, drawn tallest first
 * (approve + review + deny in deny's colour, then approve + review, then approve), so each
 * decision shows as its own segment of one bar.
 */
function stacked(rows: Counts[]): (number | null)[][] {
  return [
    rows.map((r) => r.approve + r.review + r.deny),
    rows.map((r) => r.approve + r.review),
    rows.map((r) => r.approve),
  ];
}

const STACK_ORDER: Decision[] = ["deny", "review", "approve"];

function barSeries(size: [number, number]): uPlot.Series[] {
  const bars = uPlot.paths.bars?.({ size });
  return STACK_ORDER.map((decision) => ({
    label: decision,
    fill: COLOUR[decision],
    stroke: COLOUR[decision],
    paths: bars,
    points: { show: false },
  }));
}

/** A `YYYY-MM-DD` day as its local midnight in seconds: uPlot draws the time axis locally. */
function localMidnight(date: string): number {
  const [year, month, day] = date.split("-").map(Number);
  return new Date(year ?? 1970, (month ?? 1) - 1, day ?? 1).getTime() / 1000;
}

const HALF_DAY = 43_200;

/** Counts are whole: the y axis steps by whole numbers, never 0.5. */
const COUNT_AXIS: uPlot.Axis = {
  label: "Assessments",
  incrs: [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 1e5, 1e6,
  ],
};

/**
 * Assessments per day by decision: lines over a long period, stacked bars when the period is
 * short (a week or less) or holds few days with traffic, where lines would be a dot or two.
 */
export function VolumeChart({ days }: { days: (Counts & { date: string })[] }) {
  const shape = JSON.stringify(days);
  const { options, data, bars } = useMemo(() => {
    const xs = days.map((day) => localMidnight(day.date));
    const busy = days.filter((d) => d.approve + d.review + d.deny > 0).length;
    const bars = days.length <= 7 || busy <= 3;
    const common = {
      legend: { show: false },
      axes: [{}, COUNT_AXIS],
    };
    if (bars) {
      const options: Omit<Options, "width" | "height"> = {
        ...common,
        scales: {
          x: {
            time: true,
            range: (_u, min, max) => [min - HALF_DAY, max + HALF_DAY],
          },
          y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        series: [{ label: "Day" }, ...barSeries([0.6, 80])],
      };
      return { options, data: [xs, ...stacked(days)] as unknown as AlignedData, bars };
    }
    const options: Omit<Options, "width" | "height"> = {
      ...common,
      scales: { x: { time: true } },
      series: [
        { label: "Day" },
        ...(["approve", "review", "deny"] as const).map((decision) => ({
          label: decision,
          stroke: COLOUR[decision],
          width: 2,
          points: { show: true },
        })),
      ],
    };
    const data: AlignedData = [
      xs,
      days.map((d) => d.approve),
      days.map((d) => d.review),
      days.map((d) => d.deny),
    ];
    return { options, data, bars };
  }, [shape]);
  return (
    <Chart
      title={`Assessments per day by decision, as ${bars ? "stacked bars" : "lines"}`}
      options={options}
      data={data}
    />
  );
}

export interface Bin extends Counts {
  min: number;
  max: number;
}

/** The risk score histogram: one stacked bar per bin, by decision. */
export function ScoreHistogram({ bins }: { bins: Bin[] }) {
  const shape = JSON.stringify(bins);
  const { options, data } = useMemo(() => {
    const xs = bins.map((_, index) => index);
    const options: Omit<Options, "width" | "height"> = {
      legend: { show: false },
      cursor: { show: false },
      scales: {
        x: { time: false, range: [-0.5, bins.length - 0.5] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [
        {
          label: "Risk score",
          splits: () => xs,
          values: (_u, splits) =>
            splits.map((i) => {
              const bin = bins[i];
              return bin ? `${bin.min}–${bin.max}` : "";
            }),
        },
        COUNT_AXIS,
      ],
      series: [{ label: "Score" }, ...barSeries([0.8, 64])],
    };
    return { options, data: [xs, ...stacked(bins)] as unknown as AlignedData };
  }, [shape]);
  return (
    <Chart
      title="Risk score distribution by decision, stacked bars"
      options={options}
      data={data}
    />
  );
}
