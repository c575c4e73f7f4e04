/**
 * The seeded draws of a bench's request bodies (sfc32), so that two runs send the same mix.
 *
 * It matters for more than amounts: the service compares each amount with the median of the
 * agent's approved ones (src/assess/behavior.ts), and in `bench:assess` only the first few
 * assessments are approved before `activity_burst` holds the rest. With `Math.random`, those
 * few set a different median every run, which moved the fresh phase between `deny` and
 * `review` (28–47% reviews), and a review costs more CPU than a denial.
 */
export class Draw {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 12; i++) this.next(); // spread the seed's bits before the first draw
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)] as T;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}
