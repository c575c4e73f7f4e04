import { z } from "@hono/zod-openapi";
import { duration, parseDuration } from "./rules/duration";
import { compileRules, type Program } from "./rules/evaluate";
import { GRAMMAR_VERSION, RuleList } from "./rules/grammar";
import { RULES_REFERENCE } from "./rules/reference";

// The rules of a policy (the spec's create shape), and their normalized form the model reads.

/** A non-empty list of distinct codes: a repeat is a typo, and would hide a missing code. */
function codeList(code: z.ZodString, max: number) {
  return z
    .array(code)
    .min(1)
    .max(max)
    .superRefine((codes, ctx) => {
      codes.forEach((value, index) => {
        if (codes.indexOf(value) !== index) {
          ctx.addIssue({ code: "custom", path: [index], message: `repeats ${value}` });
        }
      });
    });
}

const currencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code of 3 uppercase letters");
const countryCode = z
  .string()
  .regex(/^[A-Z]{2}$/, "must be an ISO 3166-1 alpha-2 code of 2 uppercase letters");

/** Strict at every level: a misspelt rule must fail, not silently allow everything. */
export const PolicyRules = z
  .strictObject({
    max_amount: z.int().nonnegative().optional().openapi({
      description: "Largest amount allowed, in ISO 4217 minor units of the action's currency",
      example: 100_000,
    }),
    currencies: codeList(currencyCode, 300)
      .optional()
      .openapi({ example: ["EUR", "USD"] }),
    geo: z
      .strictObject({
        allow: codeList(countryCode, 300).openapi({
          description: "Countries a request may come from",
          example: ["DE", "FR"],
        }),
      })
      .optional(),
    velocity: z
      .strictObject({
        window: duration,
        max: z.int().min(1).openapi({ description: "Assessments allowed per agent per window" }),
      })
      .optional(),
    grammar: z.literal(GRAMMAR_VERSION).optional().openapi({
      description: "The version of the rule language `rules` is written in; required with `rules`",
    }),
    rules: RuleList.optional(),
  })
  .superRefine((rules, ctx) => {
    if (rules.rules !== undefined && rules.grammar === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["grammar"],
        message: `required with rules (the current grammar is ${GRAMMAR_VERSION})`,
      });
    }
  })
  .openapi("PolicyRules", {
    description:
      "Every field is optional; an empty object allows everything. The limits (`max_amount`, " +
      "`currencies`, `geo`, `velocity`) are the spec's create shape; `rules` is an ordered " +
      `rule list in the rule language \`grammar\` ([Policy rules](${RULES_REFERENCE.section}))`,
  });
export type PolicyRules = z.infer<typeof PolicyRules>;

type Velocity = NonNullable<PolicyRules["velocity"]>;
export type NormalizedRules = Omit<PolicyRules, "velocity"> & {
  velocity?: Velocity & { window_seconds: number };
  /** The rule list, compiled; absent without one. */
  program?: Program;
};

/**
 * The rules with `velocity.window_seconds` added and the rule list compiled. Throws on a
 * window or a rule the schema refuses.
 */
export function normalizeRules(rules: PolicyRules): NormalizedRules {
  let normalized = rules as NormalizedRules;
  if (rules.velocity !== undefined) {
    const windowSeconds = parseDuration(rules.velocity.window);
    if (windowSeconds === null) throw new Error("policy rules: invalid velocity window");
    normalized = { ...rules, velocity: { ...rules.velocity, window_seconds: windowSeconds } };
  }
  if (rules.rules !== undefined) normalized = { ...normalized, program: compileRules(rules.rules) };
  return normalized;
}
