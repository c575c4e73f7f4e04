// numpy's `argsort(kind="quicksort")` for one numeric key (numpy/_core/src/npysort/
// quicksort.cpp, `aquicksort_` and `aheapsort_`, as numpy ≤ 1.24 runs it without AVX-512):
// an introsort, median of three, insertion sort below 16 elements. It is not stable, and
// pandas' `sort_values` uses it, so reproducing the order it gives tied keys is what makes
// the Handbook's TRANSACTION_IDs come out the same.

const SMALL_QUICKSORT = 15;

function heapsort(v: ArrayLike<number>, a: Int32Array, start: number, n: number): void {
  // 1-based heap over a[start .. start + n - 1].
  const at = (k: number) => start + k - 1;
  let tmp: number;
  for (let l = n >> 1; l > 0; --l) {
    tmp = a[at(l)] as number;
    let i = l;
    for (let j = l << 1; j <= n; ) {
      if (j < n && (v[a[at(j)] as number] as number) < (v[a[at(j + 1)] as number] as number))
        j += 1;
      if ((v[tmp] as number) < (v[a[at(j)] as number] as number)) {
        a[at(i)] = a[at(j)] as number;
        i = j;
        j += j;
      } else break;
    }
    a[at(i)] = tmp;
  }
  for (; n > 1; ) {
    tmp = a[at(n)] as number;
    a[at(n)] = a[at(1)] as number;
    n -= 1;
    let i = 1;
    for (let j = 2; j <= n; ) {
      if (j < n && (v[a[at(j)] as number] as number) < (v[a[at(j + 1)] as number] as number)) j++;
      if ((v[tmp] as number) < (v[a[at(j)] as number] as number)) {
        a[at(i)] = a[at(j)] as number;
        i = j;
        j += j;
      } else break;
    }
    a[at(i)] = tmp;
  }
}

/** The permutation numpy's quicksort argsort gives `v` (ties in numpy's own order). */
export function numpyArgsort(v: ArrayLike<number>): Int32Array {
  const num = v.length;
  const a = Int32Array.from({ length: num }, (_, i) => i);
  if (num < 2) return a;
  const swap = (x: number, y: number) => {
    const t = a[x] as number;
    a[x] = a[y] as number;
    a[y] = t;
  };
  const key = (p: number) => v[a[p] as number] as number;
  let pl = 0;
  let pr = num - 1;
  const stack: number[] = [];
  const depths: number[] = [];
  let cdepth = (31 - Math.clz32(num)) * 2;
  for (;;) {
    if (cdepth < 0) {
      heapsort(v, a, pl, pr - pl + 1);
    } else {
      while (pr - pl > SMALL_QUICKSORT) {
        const pm = pl + ((pr - pl) >> 1);
        if (key(pm) < key(pl)) swap(pm, pl);
        if (key(pr) < key(pm)) swap(pr, pm);
        if (key(pm) < key(pl)) swap(pm, pl);
        const vp = key(pm);
        let pi = pl;
        let pj = pr - 1;
        swap(pm, pj);
        for (;;) {
          do ++pi;
          while (key(pi) < vp);
          do --pj;
          while (vp < key(pj));
          if (pi >= pj) break;
          swap(pi, pj);
        }
        swap(pi, pr - 1);
        // Push the larger partition, continue with the smaller.
        if (pi - pl < pr - pi) {
          stack.push(pi + 1, pr);
          pr = pi - 1;
        } else {
          stack.push(pl, pi - 1);
          pl = pi + 1;
        }
        depths.push(--cdepth);
      }
      for (let pi = pl + 1; pi <= pr; ++pi) {
        const vi = a[pi] as number;
        const vp = v[vi] as number;
        let pj = pi;
        while (pj > pl && vp < key(pj - 1)) {
          a[pj] = a[pj - 1] as number;
          pj--;
        }
        a[pj] = vi;
      }
    }
    if (stack.length === 0) break;
    pr = stack.pop() as number;
    pl = stack.pop() as number;
    cdepth = depths.pop() as number;
  }
  return a;
}
