// Gradient-boosted decision trees for a fraud probability: logistic loss, histogram splits
// (each feature cut into at most `bins` quantile bins, as LightGBM and XGBoost's `hist` do),
// leaf-wise growth, second-order leaf values with L2 shrinkage. Pure TypeScript over typed
// arrays: it trains in a Durable Object or a Queue consumer and scores in the Worker. The model
// is plain JSON (`BoostedTrees`), so it can be stored, signed and cached by id and version.

export interface BoostingOptions {
  trees: number;
  learningRate: number;
  /** Leaves per tree (leaf-wise growth stops here). */
  maxLeaves: number;
  maxDepth: number;
  /** Smallest hessian sum in a leaf (XGBoost's min_child_weight). */
  minChildWeight: number;
  /** Fewest rows in a leaf. */
  minLeafRows: number;
  /** L2 penalty on leaf values (XGBoost's lambda). */
  l2: number;
  /** Most bins per feature (≤ 256). */
  bins: number;
}

export const DEFAULT_BOOSTING: BoostingOptions = {
  trees: 200,
  learningRate: 0.05,
  maxLeaves: 8,
  maxDepth: 4,
  minChildWeight: 1,
  minLeafRows: 20,
  l2: 1,
  bins: 256,
};

/**
 * One tree in flat arrays: node k splits on `feature[k]` (x ≤ threshold[k] goes left), or is a
 * leaf (feature −1). `value[k]` is a leaf's output; at a split node it is the value the node
 * would have had as a leaf (rounded to 6 decimals: it only explains, see `boostedContributions`).
 */
export interface Tree {
  feature: number[];
  threshold: number[];
  left: number[];
  right: number[];
  value: number[];
}

export interface BoostedTrees {
  kind: "boosted_trees";
  /** Number of inputs a row must have. */
  width: number;
  /** Log-odds every prediction starts from (the training set's base rate). */
  base: number;
  trees: Tree[];
  /** Total split gain per feature: how much each one moved the loss. */
  importance: number[];
}

/**
 * Bin upper edges for feature `f`: half the bins at quantiles of all rows; the other half at
 * quantiles of the fraud rows, each with the largest value below it, so that the range a rare
 * class lives in (a few large amounts) can be cut exactly where it starts. A value goes to the
 * first bin whose edge is ≥ it.
 */
function binEdges(
  x: Float64Array,
  y: ArrayLike<number>,
  width: number,
  f: number,
  bins: number,
): number[] {
  const rows = y.length;
  const all = new Float64Array(rows);
  const positive: number[] = [];
  for (let i = 0; i < rows; i++) {
    const v = x[i * width + f] as number;
    all[i] = v;
    if (y[i]) positive.push(v);
  }
  all.sort();
  positive.sort((a, b) => a - b);
  const quantile = (values: ArrayLike<number>, b: number, count: number) =>
    values[Math.min(values.length - 1, Math.ceil((b * values.length) / count) - 1)] as number;
  const candidates: number[] = [];
  const fraudCuts = Math.floor(bins / 4);
  for (let b = 1; b <= fraudCuts && positive.length > 0; b++) {
    const v = quantile(positive, b, fraudCuts);
    candidates.push(v);
    // The largest value below v: the cut that puts v and everything above it on one side.
    let lo = 0;
    let hi = rows;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((all[mid] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) candidates.push(all[lo - 1] as number);
  }
  const bulk = bins - 2 * fraudCuts;
  for (let b = 1; b <= bulk; b++) candidates.push(quantile(all, b, bulk));
  candidates.sort((a, b) => a - b);
  const edges: number[] = [];
  for (const v of candidates) {
    if (edges.length === 0 || v > (edges[edges.length - 1] as number)) edges.push(v);
  }
  // Every training value must fall in a bin: the last edge is the maximum.
  edges[edges.length - 1] = Math.max(edges[edges.length - 1] as number, all[rows - 1] as number);
  return edges;
}

function binOf(edges: readonly number[], v: number): number {
  let lo = 0;
  let hi = edges.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v <= (edges[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

interface Split {
  gain: number;
  feature: number;
  bin: number;
}

interface Leaf {
  node: number;
  rows: Int32Array;
  depth: number;
  /** Per feature per bin: gradient sums then hessian sums (2 · width · bins). */
  hist: Float64Array;
  g: number;
  h: number;
  split: Split | null;
}

/**
 * Trains on `rows` rows of `width` features (`x` row-major) with labels `y` (1 = fraud).
 * Deterministic: the same data and options give the same model.
 */
export function trainBoostedTrees(
  x: Float64Array,
  y: ArrayLike<number>,
  width: number,
  options: Partial<BoostingOptions> = {},
): BoostedTrees {
  const o = { ...DEFAULT_BOOSTING, ...options };
  const rows = y.length;
  if (x.length !== rows * width) throw new RangeError("x must hold rows × width values");
  if (o.bins > 256) throw new RangeError("at most 256 bins");
  const edges = Array.from({ length: width }, (_, f) => binEdges(x, y, width, f, o.bins));
  // Each cell holds its histogram slot, feature · bins + bin: the inner loop does no arithmetic.
  const slot = new Uint16Array(rows * width);
  for (let i = 0; i < rows; i++) {
    for (let f = 0; f < width; f++) {
      slot[i * width + f] = f * o.bins + binOf(edges[f] as number[], x[i * width + f] as number);
    }
  }
  let positives = 0;
  for (let i = 0; i < rows; i++) positives += y[i] ? 1 : 0;
  const rate = Math.min(Math.max(positives / rows, 1e-6), 1 - 1e-6);
  const base = Math.log(rate / (1 - rate));
  const score = new Float64Array(rows).fill(base);
  const grad = new Float64Array(rows);
  const hess = new Float64Array(rows);
  const importance = new Array<number>(width).fill(0);
  const trees: Tree[] = [];
  const all = Int32Array.from({ length: rows }, (_, i) => i);
  // A histogram holds, per slot, the gradient sum then the hessian sum.
  const histSize = 2 * width * o.bins;

  // Histograms are reused: a leaf's goes back to the pool once it is split or the tree is done.
  const pool: Float64Array[] = [];
  const fresh = (): Float64Array => {
    const reused = pool.pop();
    if (!reused) return new Float64Array(histSize);
    reused.fill(0);
    return reused;
  };

  const histogram = (ids: Int32Array): Float64Array => {
    const hist = fresh();
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k] as number;
      const g = grad[i] as number;
      const h = hess[i] as number;
      const end = (i + 1) * width;
      for (let c = i * width; c < end; c++) {
        const at = 2 * (slot[c] as number);
        hist[at] = (hist[at] as number) + g;
        hist[at + 1] = (hist[at + 1] as number) + h;
      }
    }
    return hist;
  };

  const bestSplit = (leaf: Leaf): Split | null => {
    if (leaf.depth >= o.maxDepth || leaf.rows.length < 2 * o.minLeafRows) return null;
    const parent = (leaf.g * leaf.g) / (leaf.h + o.l2);
    let best: Split | null = null;
    // Row counts per bin are not kept: the hessian sum stands in for them, checked after.
    for (let f = 0; f < width; f++) {
      const nb = (edges[f] as number[]).length;
      let gl = 0;
      let hl = 0;
      for (let b = 0; b < nb - 1; b++) {
        const at = 2 * (f * o.bins + b);
        gl += leaf.hist[at] as number;
        hl += leaf.hist[at + 1] as number;
        const gr = leaf.g - gl;
        const hr = leaf.h - hl;
        if (hl < o.minChildWeight || hr < o.minChildWeight) continue;
        const gain = (gl * gl) / (hl + o.l2) + (gr * gr) / (hr + o.l2) - parent;
        if (gain > 1e-12 && (!best || gain > best.gain)) best = { gain, feature: f, bin: b };
      }
    }
    return best;
  };

  for (let t = 0; t < o.trees; t++) {
    let gSum = 0;
    let hSum = 0;
    for (let i = 0; i < rows; i++) {
      const p = 1 / (1 + Math.exp(-(score[i] as number)));
      grad[i] = p - (y[i] ? 1 : 0);
      hess[i] = Math.max(p * (1 - p), 1e-16);
      gSum += grad[i] as number;
      hSum += hess[i] as number;
    }
    const tree: Tree = { feature: [-1], threshold: [0], left: [-1], right: [-1], value: [0] };
    const root: Leaf = {
      node: 0,
      rows: all,
      depth: 0,
      hist: histogram(all),
      g: gSum,
      h: hSum,
      split: null,
    };
    root.split = bestSplit(root);
    const open: Leaf[] = [root];
    while (open.length > 0 && open.length < o.maxLeaves) {
      let pick = -1;
      for (let k = 0; k < open.length; k++) {
        const s = (open[k] as Leaf).split;
        if (s && (pick < 0 || s.gain > ((open[pick] as Leaf).split as Split).gain)) pick = k;
      }
      if (pick < 0) break;
      const leaf = open.splice(pick, 1)[0] as Leaf;
      const split = leaf.split as Split;
      const cut = split.feature * o.bins + split.bin;
      let leftCount = 0;
      for (const i of leaf.rows)
        if ((slot[i * width + split.feature] as number) <= cut) leftCount++;
      const l = new Int32Array(leftCount);
      const r = new Int32Array(leaf.rows.length - leftCount);
      let li = 0;
      let ri = 0;
      for (const i of leaf.rows) {
        if ((slot[i * width + split.feature] as number) <= cut) l[li++] = i;
        else r[ri++] = i;
      }
      if (l.length < o.minLeafRows || r.length < o.minLeafRows) {
        leaf.split = null;
        open.push(leaf);
        continue;
      }
      importance[split.feature] = (importance[split.feature] as number) + split.gain;
      // -x || 0: a zero gradient sum gives −0, which JSON and toEqual would show as 0 and −0.
      tree.value[leaf.node] =
        Math.round((-leaf.g / (leaf.h + o.l2)) * o.learningRate * 1e6) / 1e6 || 0;
      // Build the smaller child's histogram; the larger one is the parent's minus it.
      const small = l.length <= r.length ? l : r;
      const smallHist = histogram(small);
      const bigHist = fresh();
      for (let k = 0; k < histSize; k++)
        bigHist[k] = (leaf.hist[k] as number) - (smallHist[k] as number);
      const [lh, rh] = small === l ? [smallHist, bigHist] : [bigHist, smallHist];
      pool.push(leaf.hist);
      const sums = (hist: Float64Array): [number, number] => {
        let g = 0;
        let h = 0;
        for (let b = 0; b < o.bins; b++) {
          g += hist[2 * b] as number;
          h += hist[2 * b + 1] as number;
        }
        return [g, h];
      };
      const [lg, lhs] = sums(lh);
      const leftNode = tree.feature.length;
      const rightNode = leftNode + 1;
      tree.feature.push(-1, -1);
      tree.threshold.push(0, 0);
      tree.left.push(-1, -1);
      tree.right.push(-1, -1);
      tree.value.push(0, 0);
      tree.feature[leaf.node] = split.feature;
      tree.threshold[leaf.node] = (edges[split.feature] as number[])[split.bin] as number;
      tree.left[leaf.node] = leftNode;
      tree.right[leaf.node] = rightNode;
      const children: Leaf[] = [
        { node: leftNode, rows: l, depth: leaf.depth + 1, hist: lh, g: lg, h: lhs, split: null },
        {
          node: rightNode,
          rows: r,
          depth: leaf.depth + 1,
          hist: rh,
          g: leaf.g - lg,
          h: leaf.h - lhs,
          split: null,
        },
      ];
      for (const c of children) {
        c.split = bestSplit(c);
        open.push(c);
      }
    }
    for (const leaf of open) {
      pool.push(leaf.hist);
      const v = (-leaf.g / (leaf.h + o.l2)) * o.learningRate;
      tree.value[leaf.node] = v;
      for (const i of leaf.rows) score[i] = (score[i] as number) + v;
    }
    trees.push(tree);
  }
  return { kind: "boosted_trees", width, base, trees, importance };
}

/** The model's log-odds for one row. */
export function boostedLogOdds(model: BoostedTrees, row: ArrayLike<number>): number {
  let s = model.base;
  for (const t of model.trees) {
    let k = 0;
    let f = t.feature[0] as number;
    while (f >= 0) {
      k =
        (row[f] as number) <= (t.threshold[k] as number)
          ? (t.left[k] as number)
          : (t.right[k] as number);
      f = t.feature[k] as number;
    }
    s += t.value[k] as number;
  }
  return s;
}

/** The fraud probability of one row. */
export function boostedProbability(model: BoostedTrees, row: ArrayLike<number>): number {
  return 1 / (1 + Math.exp(-boostedLogOdds(model, row)));
}

/**
 * Why the model scored `row` as it did, by Saabas' method (XGBoost's `approx_contribs`): along
 * the row's path in each tree, the change from a node's value to its child's is credited to the
 * node's split feature. The sums telescope, so `expected` (the base plus every tree's root value:
 * what the model says before looking at any feature) plus the contributions is the log-odds.
 */
export function boostedContributions(
  model: BoostedTrees,
  row: ArrayLike<number>,
): { expected: number; contributions: Float64Array } {
  const contributions = new Float64Array(model.width);
  let expected = model.base;
  for (const t of model.trees) {
    let k = 0;
    expected += t.value[0] as number;
    let f = t.feature[0] as number;
    while (f >= 0) {
      const next =
        (row[f] as number) <= (t.threshold[k] as number)
          ? (t.left[k] as number)
          : (t.right[k] as number);
      contributions[f] =
        (contributions[f] as number) + (t.value[next] as number) - (t.value[k] as number);
      k = next;
      f = t.feature[k] as number;
    }
  }
  return { expected, contributions };
}
