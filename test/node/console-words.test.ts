import { describe, expect, it } from "vitest";
import { MODEL_GROUPS, rejectionWords, signalWords, WORDED } from "../../console/src/words";
import { REJECTION_CATALOG, SIGNAL_CATALOG } from "../../src/assess/signals";
import { REASON_CODES } from "../../src/schemas/vocabulary";

// console/src/words.ts: every code the service can give a reviewer reads as a sentence.

// The learned model's reasons are the catalog's `model_*` signals (src/assess/learned-model.ts
// emits only those); read from the catalog, because the model's module reaches Node's crypto,
// which the console's type check (console/tsconfig.json) does not have.
const MODEL_SIGNAL_TYPES = Object.keys(SIGNAL_CATALOG).filter((type) => type.startsWith("model_"));

describe("the console's words for codes", () => {
  it("has a sentence for every signal type, the learned model's reasons included", () => {
    expect(WORDED.signals.sort()).toEqual(Object.keys(SIGNAL_CATALOG).sort());
    for (const type of MODEL_SIGNAL_TYPES) {
      expect(signalWords(type)).not.toBe(type);
      expect(MODEL_GROUPS[type]).toEqual(expect.any(String));
    }
    expect(Object.keys(MODEL_GROUPS).sort()).toEqual([...MODEL_SIGNAL_TYPES].sort());
  });

  it("has a sentence for every rejection key, a deny rule's and every action reason code", () => {
    const keys = [...Object.keys(REJECTION_CATALOG), "policy_rule_denied", ...REASON_CODES];
    expect(WORDED.rejections.sort()).toEqual([...new Set(keys)].sort());
    for (const key of keys) expect(rejectionWords(key)).toMatch(/^[A-Z].*\.$/);
  });

  it("reads an unknown code as itself", () => {
    expect(signalWords("brand_new_signal")).toBe("brand_new_signal");
    expect(rejectionWords("brand_new_reason")).toBe("brand_new_reason");
  });
});
