// L2-regularised logistic regression on standardised inputs, solved to convergence by Newton's
// method. The objective is scikit-learn's `LogisticRegression(C)` (½‖w‖² + C·Σ log-loss, the
// intercept unpenalised) after its `StandardScaler`, so the Handbook's baseline row can be
// reproduced; it is also the simple, explainable model a small org's history can support.

export interface LogisticModel {
  kind: "logistic";
  width: number;
  /** Standardisation: (x − mean) / scale per input (scale 1 for a constant input). */
  mean: number[];
  scale: number[];
  intercept: number;
  weights: number[];
}

export interface LogisticOptions {
  /** Inverse regularisation strength (scikit-learn's C). */
  c: number;
  maxIterations: number;
  /** Stop when no weight moves more than this in a Newton step. */
  tolerance: number;
}

const DEFAULTS: LogisticOptions = { c: 1, maxIterations: 50, tolerance: 1e-10 };

/** Solves A·x = b in place (A symmetric positive definite, n × n row-major) by Cholesky. */
function solve(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * n + j] as number;
      for (let k = 0; k < j; k++) s -= (l[i * n + k] as number) * (l[j * n + k] as number);
      l[i * n + j] = i === j ? Math.sqrt(Math.max(s, 1e-300)) : s / (l[j * n + j] as number);
    }
  }
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i] as number;
    for (let k = 0; k < i; k++) s -= (l[i * n + k] as number) * (z[k] as number);
    z[i] = s / (l[i * n + i] as number);
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = z[i] as number;
    for (let k = i + 1; k < n; k++) s -= (l[k * n + i] as number) * (x[k] as number);
    x[i] = s / (l[i * n + i] as number);
  }
  return x;
}

/** Trains on `x` (row-major, `width` inputs per row) and labels `y` (1 = fraud). */
export function trainLogistic(
  x: Float64Array,
  y: ArrayLike<number>,
  width: number,
  options: Partial<LogisticOptions> = {},
): LogisticModel {
  const o = { ...DEFAULTS, ...options };
  const rows = y.length;
  const mean = new Array<number>(width).fill(0);
  const scale = new Array<number>(width).fill(0);
  for (let i = 0; i < rows; i++) {
    for (let f = 0; f < width; f++)
      mean[f] = (mean[f] as number) + (x[i * width + f] as number) / rows;
  }
  for (let i = 0; i < rows; i++) {
    for (let f = 0; f < width; f++) {
      const d = (x[i * width + f] as number) - (mean[f] as number);
      scale[f] = (scale[f] as number) + (d * d) / rows;
    }
  }
  for (let f = 0; f < width; f++) scale[f] = Math.sqrt(scale[f] as number) || 1;
  // Column 0 is the intercept; columns 1..width the standardised inputs.
  const n = width + 1;
  const z = new Float64Array(rows * n);
  for (let i = 0; i < rows; i++) {
    z[i * n] = 1;
    for (let f = 0; f < width; f++) {
      z[i * n + f + 1] =
        ((x[i * width + f] as number) - (mean[f] as number)) / (scale[f] as number);
    }
  }
  const w = new Float64Array(n);
  for (let iteration = 0; iteration < o.maxIterations; iteration++) {
    const grad = new Float64Array(n);
    const hess = new Float64Array(n * n);
    for (let j = 1; j < n; j++) {
      grad[j] = w[j] as number;
      hess[j * n + j] = 1;
    }
    for (let i = 0; i < rows; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += (w[j] as number) * (z[i * n + j] as number);
      const p = 1 / (1 + Math.exp(-s));
      const r = o.c * (p - (y[i] ? 1 : 0));
      const h = o.c * p * (1 - p);
      for (let j = 0; j < n; j++) {
        const zj = z[i * n + j] as number;
        grad[j] = (grad[j] as number) + r * zj;
        for (let k = 0; k <= j; k++)
          hess[j * n + k] = (hess[j * n + k] as number) + h * zj * (z[i * n + k] as number);
      }
    }
    for (let j = 0; j < n; j++)
      for (let k = j + 1; k < n; k++) hess[j * n + k] = hess[k * n + j] as number;
    const step = solve(hess, grad, n);
    let moved = 0;
    for (let j = 0; j < n; j++) {
      w[j] = (w[j] as number) - (step[j] as number);
      moved = Math.max(moved, Math.abs(step[j] as number));
    }
    if (moved < o.tolerance) break;
  }
  return {
    kind: "logistic",
    width,
    mean,
    scale,
    intercept: w[0] as number,
    weights: Array.from(w.subarray(1)),
  };
}

/** The fraud probability of one row. */
export function logisticProbability(model: LogisticModel, row: ArrayLike<number>): number {
  let s = model.intercept;
  for (let f = 0; f < model.width; f++) {
    s +=
      ((model.weights[f] as number) * ((row[f] as number) - (model.mean[f] as number))) /
      (model.scale[f] as number);
  }
  return 1 / (1 + Math.exp(-s));
}
