import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

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
