// The two random generators the Fraud Detection Handbook's simulator draws from, reproduced
// draw for draw so that seed 0 regenerates the Handbook's own dataset: numpy's legacy
// `RandomState` (`np.random.seed`, `uniform`, `normal`, `poisson`, `permutation`) and CPython's
// `random` (`seed`, `choice`, `sample`). Both sit on the same MT19937 generator; only the seeding
// and the algorithms on top differ. Sources: numpy/random/src/mt19937/mt19937.c,
// numpy/random/src/legacy/legacy-distributions.c, numpy/random/src/distributions/distributions.c,
// numpy/random/mtrand.pyx, CPython Modules/_randommodule.c and Lib/random.py.

const N = 624;
const M = 397;

/** MT19937 (Matsumoto and Nishimura), the 32-bit output both numpy and CPython use. */
export class Mt19937 {
  private readonly mt = new Uint32Array(N);
  private index = N;

  /** `init_genrand`: numpy's legacy seeding of an integer seed. */
  seed(seed: number): void {
    const mt = this.mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] as number;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
    this.index = N;
  }

  /** `init_by_array`: CPython's seeding of an integer (its 32-bit words, least first). */
  seedByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.seed(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] as number;
      mt[i] =
        (((mt[i] as number) ^ Math.imul(prev ^ (prev >>> 30), 1664525)) +
          (key[j] as number) +
          j) >>>
        0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] as number;
      mt[i] = (((mt[i] as number) ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.index = N;
  }

  nextUint32(): number {
    const mt = this.mt;
    if (this.index >= N) {
      for (let k = 0; k < N; k++) {
        const y = ((mt[k] as number) & 0x80000000) | ((mt[(k + 1) % N] as number) & 0x7fffffff);
        mt[k] = (mt[(k + M) % N] as number) ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++] as number;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** A double in [0, 1) from 53 random bits (numpy's and CPython's `random()` alike). */
  nextDouble(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }
}

/** numpy's legacy `RandomState`, the generator behind `np.random.seed` and pandas' `sample`. */
export class NumpyRandomState {
  private readonly mt = new Mt19937();
  private gauss: number | null = null;

  constructor(seed = 0) {
    this.seed(seed);
  }

  /** `np.random.seed(int)`: also forgets the cached second normal. */
  seed(seed: number): void {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new RangeError(`seed must be an integer in [0, 2**32): ${seed}`);
    }
    this.mt.seed(seed);
    this.gauss = null;
  }

  randomSample(): number {
    return this.mt.nextDouble();
  }

  uniform(low = 0, high = 1): number {
    return low + (high - low) * this.mt.nextDouble();
  }

  /** `legacy_gauss`: the polar Box–Muller method, which yields two values and caches one. */
  standardNormal(): number {
    if (this.gauss !== null) {
      const cached = this.gauss;
      this.gauss = null;
      return cached;
    }
    let x1: number;
    let x2: number;
    let r2: number;
    do {
      x1 = 2 * this.mt.nextDouble() - 1;
      x2 = 2 * this.mt.nextDouble() - 1;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1 || r2 === 0);
    const f = Math.sqrt((-2 * Math.log(r2)) / r2);
    this.gauss = f * x1;
    return f * x2;
  }

  normal(loc = 0, scale = 1): number {
    return loc + scale * this.standardNormal();
  }

  /** `random_poisson` for lam < 10 (the multiplication method; the simulator never needs more). */
  poisson(lam: number): number {
    if (lam >= 10) throw new RangeError("poisson: lam >= 10 (PTRS) is not implemented");
    if (lam === 0) return 0;
    const enlam = Math.exp(-lam);
    let x = 0;
    let prod = 1;
    for (;;) {
      prod *= this.mt.nextDouble();
      if (prod > enlam) x += 1;
      else return x;
    }
  }

  /** `random_interval`: a uniform integer in [0, max] by masked rejection. */
  interval(max: number): number {
    if (max === 0) return 0;
    if (max > 0xffffffff) throw new RangeError("interval: max above 2**32 is not implemented");
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let value: number;
    do value = (this.mt.nextUint32() & mask) >>> 0;
    while (value > max);
    return value;
  }

  /** `permutation(n)`: `arange(n)` shuffled by the legacy Fisher–Yates pass. */
  permutation(n: number): Int32Array {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) out[i] = i;
    for (let i = n - 1; i >= 1; i--) {
      const j = this.interval(i);
      const t = out[i] as number;
      out[i] = out[j] as number;
      out[j] = t;
    }
    return out;
  }

  /** `choice(n, size, replace=False)` as pandas' `sample(n=size, random_state=seed)` calls it. */
  choiceWithoutReplacement(n: number, size: number): Int32Array {
    if (size > n) throw new RangeError("cannot take a larger sample than the population");
    return this.permutation(n).subarray(0, size);
  }
}

/** CPython's `random.Random`, as the simulator uses it (`seed(int)`, `choice`, `sample`). */
export class PythonRandom {
  private readonly mt = new Mt19937();

  constructor(seed = 0) {
    this.seed(seed);
  }

  /** `random.seed(n)` for an integer: MT19937's array seeding with |n|'s 32-bit words. */
  seed(seed: number): void {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer: ${seed}`);
    let n = Math.abs(seed);
    const key: number[] = [];
    do {
      key.push(n % 0x100000000);
      n = Math.floor(n / 0x100000000);
    } while (n > 0);
    this.mt.seedByArray(key);
  }

  random(): number {
    return this.mt.nextDouble();
  }

  /** `getrandbits(k)` for k ≤ 32. */
  private bits(k: number): number {
    return this.mt.nextUint32() >>> (32 - k);
  }

  /** `_randbelow_with_getrandbits(n)`: a uniform integer in [0, n) by rejection. */
  randbelow(n: number): number {
    if (n <= 0) return 0;
    if (n > 0xffffffff) throw new RangeError("randbelow: n above 2**32 is not implemented");
    const k = 32 - Math.clz32(n);
    let r = this.bits(k);
    while (r >= n) r = this.bits(k);
    return r;
  }

  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("cannot choose from an empty sequence");
    return items[this.randbelow(items.length)] as T;
  }

  /** `random.sample(population, k)`: the pool method for small populations, else a set. */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (k < 0 || k > n) throw new RangeError("sample larger than population or is negative");
    const result: T[] = new Array(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = population.slice();
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j] as T;
        pool[j] = pool[n - i - 1] as T;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j] as T;
      }
    }
    return result;
  }
}
