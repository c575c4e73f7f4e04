import { describe, expect, it } from "vitest";
import { numpyArgsort } from "../../scripts/bench/quality/numpy-sort.ts";
import { NumpyRandomState, PythonRandom } from "../../scripts/bench/quality/random.ts";

// Expected values printed by numpy 2.4.6 (legacy RandomState) and CPython 3 `random`:
// the simulator reproduces the Handbook's dataset only if these agree to the last bit.
describe("numpy's legacy RandomState", () => {
  it("draws numpy's first uniforms for seed 0", () => {
    const r = new NumpyRandomState(0);
    expect([r.uniform(0, 100), r.uniform(0, 100), r.uniform(0, 100)]).toEqual([
      54.88135039273247, 71.51893663724195, 60.276337607164386,
    ]);
  });

  it("draws normals by the polar method, the second one cached", () => {
    const r = new NumpyRandomState(0);
    r.uniform(0, 100);
    r.uniform(0, 100);
    r.uniform(0, 100);
    expect([r.normal(43200, 20000), r.normal(43200, 20000), r.normal(43200, 20000)]).toEqual([
      -2166.5640236074833, 69870.90763243794, 26345.518923414253,
    ]);
  });

  it("draws Poisson counts by the multiplication method", () => {
    const r = new NumpyRandomState(0);
    for (let i = 0; i < 3; i++) r.uniform(0, 100);
    for (let i = 0; i < 3; i++) r.normal(43200, 20000);
    expect(Array.from({ length: 5 }, () => r.poisson(2.17))).toEqual([5, 1, 0, 0, 7]);
  });

  it("forgets the cached normal when reseeded", () => {
    const r = new NumpyRandomState(0);
    r.normal();
    r.seed(0);
    const again = new NumpyRandomState(0);
    expect(r.normal()).toBe(again.normal());
  });

  it("permutes and samples without replacement as pandas' sample does", () => {
    expect(Array.from(new NumpyRandomState(7).permutation(10))).toEqual([
      8, 5, 0, 2, 1, 9, 7, 3, 6, 4,
    ]);
    expect(Array.from(new NumpyRandomState(3).choiceWithoutReplacement(10000, 2))).toEqual([
      5876, 6555,
    ]);
  });
});

describe("CPython's random", () => {
  it("chooses and samples as Python does for seed 0", () => {
    const p = new PythonRandom(0);
    const items = Array.from({ length: 37 }, (_, i) => i);
    expect(Array.from({ length: 5 }, () => p.choice(items))).toEqual([24, 26, 2, 16, 32]);
    expect(
      p.sample(
        Array.from({ length: 100 }, (_, i) => i),
        10,
      ),
    ).toEqual([62, 51, 38, 61, 45, 74, 27, 64, 17, 36]);
    expect(
      p.sample(
        Array.from({ length: 10 }, (_, i) => i),
        3,
      ),
    ).toEqual([2, 1, 4]);
  });

  it("seeds a large integer by its 32-bit words", () => {
    expect(new PythonRandom(2 ** 40 + 5).random()).toBe(0.5043802970418443);
  });
});

describe("numpy's quicksort argsort", () => {
  it("orders tied keys as numpy 1.24 does (pandas' sort_values, same-second transactions)", () => {
    const v = [
      5, 3, 5, 1, 3, 3, 5, 1, 0, 5, 3, 3, 1, 5, 5, 3, 1, 0, 3, 5, 5, 1, 3, 5, 0, 3, 3, 5, 1, 5, 3,
      3, 1, 5,
    ];
    expect(Array.from(numpyArgsort(v))).toEqual([
      24, 17, 8, 21, 32, 28, 12, 16, 3, 7, 30, 10, 22, 5, 4, 15, 31, 18, 26, 25, 1, 11, 29, 27, 0,
      20, 19, 14, 13, 9, 6, 2, 23, 33,
    ]);
  });
});
