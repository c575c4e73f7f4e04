import { z } from "@hono/zod-openapi";
import { plainText, storableText } from "../../schemas/common";
import { DECISIONS } from "../../schemas/vocabulary";
import {
  type AggregateSpec,
  type AttributeType,
  aggregateOf,
  attributeOf,
  type Scalar,
} from "./attributes";
import { OPERATORS, type Operator } from "./operators";
import { RULES_REFERENCE } from "./reference";

/**
 * Grammar 1 of the policy rule language (docs/rules.md): an ordered list of rules, each an
 * action and a condition; the first rule whose condition holds decides. Every condition is
 * type-checked against the attribute it reads, so a rule that could not be evaluated is a 400
 * naming its path when the policy is created, never a surprise when it runs.
 */

export const GRAMMAR_VERSION = 1;
/** A rule answers one of the assessment's decisions. */
export const RULE_ACTIONS = DECISIONS;
export type RuleAction = (typeof RULE_ACTIONS)[number];

export { OPERATORS, type Operator } from "./operators";

/**
 * Bounds that keep a policy cheap to evaluate on the hot path. `aggregates`: distinct window
 * aggregates per policy, each a subquery on every assessment and every backtest row.
 */
export const LIMITS = {
  rules: 100,
  depth: 8,
  children: 50,
  values: 500,
  nodes: 1_000,
  aggregates: 8,
} as const;

export type ConditionValue = Scalar | Scalar[];

export interface ConditionNode {
  all?: ConditionNode[] | undefined;
  any?: ConditionNode[] | undefined;
  not?: ConditionNode | undefined;
  attr?: string | undefined;
  op?: Operator | undefined;
  value?: ConditionValue | undefined;
}

const ScalarValue = z.union([storableText(256), z.number(), z.boolean()]);
const Value = z.union([ScalarValue, z.array(ScalarValue).min(1).max(LIMITS.values)]).openapi({
  description: "One value of the attribute's type, or a list of them (`in`, `between`…)",
});

export const Condition: z.ZodType<ConditionNode> = z
  .strictObject({
    get all() {
      return z.array(Condition).min(1).max(LIMITS.children).optional();
    },
    get any() {
      return z.array(Condition).min(1).max(LIMITS.children).optional();
    },
    get not() {
      return Condition.optional();
    },
    attr: z.string().min(1).max(64).optional().openapi({ example: "amount" }),
    op: z.enum(OPERATORS).optional(),
    value: Value.optional(),
  })
  .superRefine(checkNode)
  .openapi("RuleCondition", {
    description:
      "Exactly one of: `{all: [...]}`, `{any: [...]}`, `{not: {...}}`, or a comparison " +
      `\`{attr, op, value}\` ([attributes](${RULES_REFERENCE.attributes}), ` +
      `[operators](${RULES_REFERENCE.operators}))`,
    example: { attr: "amount", op: "gt", value: 50_000 },
  });

export const Rule = z
  .strictObject({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be 1-64 of a-z, 0-9, _ . - (a slug)")
      .openapi({ example: "large-new-payee" }),
    action: z.enum(RULE_ACTIONS),
    // Bounded before the recursive schema walks it: zod's recursion would exhaust the stack.
    when: z.preprocess(boundCondition, Condition),
    description: plainText(200).optional(),
  })
  .openapi("PolicyRule", { description: "When `when` holds, `action` decides (first match wins)" });
export type Rule = z.infer<typeof Rule>;

export const RuleList = z
  .array(Rule)
  .min(1)
  .max(LIMITS.rules)
  .superRefine((rules, ctx) => {
    rules.forEach((rule, index) => {
      if (rules.findIndex((other) => other.id === rule.id) !== index) {
        ctx.addIssue({ code: "custom", path: [index, "id"], message: `repeats ${rule.id}` });
      }
    });
    let nodes = 0;
    rules.forEach((rule, index) => {
      nodes += walk(rule.when, [index, "when"], 1, (path) =>
        ctx.addIssue({ code: "custom", path, message: `nests deeper than ${LIMITS.depth}` }),
      );
    });
    if (nodes > LIMITS.nodes) {
      ctx.addIssue({ code: "custom", message: `more than ${LIMITS.nodes} conditions in all` });
    }
    const beyond = aggregateBeyondLimit(rules);
    if (beyond) {
      ctx.addIssue({
        code: "custom",
        path: beyond,
        message: `a policy reads at most ${LIMITS.aggregates} distinct window aggregates`,
      });
    }
  })
  .openapi({ description: "Ordered: the first rule whose condition holds decides" });

type Path = (string | number)[];

/**
 * The preprocessing of a rule's `when`: its depth and size, checked on the raw JSON with an
 * explicit stack, so that a condition nested thousands of levels deep is a 400 naming the
 * path where it goes beyond the limit, not a stack overflow in the recursive schema. Anything
 * not shaped like a condition is left for the schema to name.
 */
function boundCondition(value: unknown, ctx: z.RefinementCtx): unknown {
  const stack: { node: unknown; path: Path; depth: number }[] = [
    { node: value, path: [], depth: 1 },
  ];
  let nodes = 0;
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop() as (typeof stack)[number];
    if (typeof node !== "object" || node === null || Array.isArray(node)) continue;
    if (depth > LIMITS.depth) {
      ctx.addIssue({ code: "custom", path, message: `nests deeper than ${LIMITS.depth}` });
      return value;
    }
    if (++nodes > LIMITS.nodes) {
      ctx.addIssue({ code: "custom", path: [], message: `more than ${LIMITS.nodes} conditions` });
      return value;
    }
    const { all, any, not } = node as Record<string, unknown>;
    // Pushed in reverse, so that the first fault in document order is the one named.
    if (Object.hasOwn(node, "not"))
      stack.push({ node: not, path: [...path, "not"], depth: depth + 1 });
    for (const form of ["any", "all"] as const) {
      const children = form === "all" ? all : any;
      if (!Object.hasOwn(node, form) || !Array.isArray(children)) continue;
      for (let index = children.length - 1; index >= 0; index--) {
        stack.push({ node: children[index], path: [...path, form, index], depth: depth + 1 });
      }
    }
  }
  return value;
}

/** The path of the first window aggregate read beyond the limit of distinct ones, if any. */
function aggregateBeyondLimit(rules: readonly Rule[]): Path | null {
  const seen = new Set<string>();
  const visit = (node: ConditionNode, path: Path): Path | null => {
    for (const form of ["all", "any"] as const) {
      const children = node[form] ?? [];
      for (const [index, child] of children.entries()) {
        const found = visit(child, [...path, form, index]);
        if (found) return found;
      }
    }
    if (node.not) return visit(node.not, [...path, "not"]);
    if (node.attr === undefined) return null;
    const aggregate = aggregateOf(node.attr);
    if (aggregate === null || typeof aggregate === "string") return null;
    seen.add(aggregate.key);
    return seen.size > LIMITS.aggregates ? [...path, "attr"] : null;
  };
  for (const [index, rule] of rules.entries()) {
    const found = visit(rule.when, [index, "when"]);
    if (found) return found;
  }
  return null;
}

/** Counts the nodes of a condition, reporting each one deeper than the limit. */
function walk(
  node: ConditionNode,
  path: (string | number)[],
  depth: number,
  tooDeep: (path: (string | number)[]) => void,
): number {
  if (depth > LIMITS.depth) {
    tooDeep(path);
    return 1;
  }
  let count = 1;
  for (const form of ["all", "any"] as const) {
    node[form]?.forEach((child, index) => {
      count += walk(child, [...path, form, index], depth + 1, tooDeep);
    });
  }
  if (node.not) count += walk(node.not, [...path, "not"], depth + 1, tooDeep);
  return count;
}

/** Every window aggregate the rules read, each once. */
export function aggregatesOf(rules: readonly Rule[]): AggregateSpec[] {
  const found = new Map<string, AggregateSpec>();
  const visit = (node: ConditionNode) => {
    node.all?.forEach(visit);
    node.any?.forEach(visit);
    if (node.not) visit(node.not);
    if (node.attr !== undefined) {
      const aggregate = aggregateOf(node.attr);
      if (aggregate !== null && typeof aggregate !== "string") found.set(aggregate.key, aggregate);
    }
  };
  for (const rule of rules) visit(rule.when);
  return [...found.values()];
}

// --- Type checking one node ---

type Issue = { path: (string | number)[]; message: string };

function checkNode(node: ConditionNode, ctx: z.RefinementCtx): void {
  for (const issue of nodeIssues(node)) ctx.addIssue({ code: "custom", ...issue });
}

/** Why a node could not be evaluated; empty when it can. */
export function nodeIssues(node: ConditionNode): Issue[] {
  const forms = [
    node.all !== undefined,
    node.any !== undefined,
    node.not !== undefined,
    node.attr !== undefined || node.op !== undefined || node.value !== undefined,
  ].filter(Boolean).length;
  if (forms !== 1) {
    return [
      {
        path: [],
        message: "must be exactly one of {all}, {any}, {not} or a comparison {attr, op, value}",
      },
    ];
  }
  if (node.attr === undefined && node.op === undefined && node.value === undefined) return [];
  if (node.attr === undefined) return [{ path: ["attr"], message: "required" }];
  if (node.op === undefined) return [{ path: ["op"], message: "required" }];
  const attribute = attributeOf(node.attr);
  if (typeof attribute === "string") return [{ path: ["attr"], message: attribute }];
  return comparisonIssues(attribute.kind, node.op, node.value);
}

const NUMERIC_OPS: readonly Operator[] = ["lt", "lte", "gt", "gte", "between"];
const SET_OPS: readonly Operator[] = ["contains", "contains_any", "contains_all"];

function comparisonIssues(
  kind: AttributeType,
  op: Operator,
  value: ConditionValue | undefined,
): Issue[] {
  if (value === undefined) return [{ path: ["value"], message: "required" }];
  if (op === "exists") {
    return typeof value === "boolean"
      ? []
      : [{ path: ["value"], message: "must be true or false" }];
  }
  const opAllowed =
    kind.type === "set"
      ? SET_OPS.includes(op)
      : !SET_OPS.includes(op) &&
        (!NUMERIC_OPS.includes(op) ||
          kind.type === "number" ||
          (kind.type === "enum" && kind.ordered && op !== "between"));
  if (!opAllowed) {
    return [{ path: ["op"], message: `${op} does not apply to a ${describe(kind)} attribute` }];
  }
  const many = op === "in" || op === "not_in" || op === "contains_any" || op === "contains_all";
  if (op === "between") {
    if (!Array.isArray(value) || value.length !== 2) {
      return [{ path: ["value"], message: "must be [low, high]" }];
    }
    const issues = value.flatMap((v, i) => scalarIssues(kind, v, ["value", i]));
    if (issues.length === 0 && (value[0] as number) > (value[1] as number)) {
      return [{ path: ["value"], message: "low must not be above high" }];
    }
    return issues;
  }
  if (many) {
    if (!Array.isArray(value)) return [{ path: ["value"], message: "must be a list" }];
    return value.flatMap((v, i) => scalarIssues(kind, v, ["value", i]));
  }
  if (Array.isArray(value))
    return [{ path: ["value"], message: `must be a single value for ${op}` }];
  return scalarIssues(kind, value, ["value"]);
}

function describe(kind: AttributeType): string {
  return kind.type === "enum" && kind.ordered ? "ordered enum" : kind.type;
}

function scalarIssues(kind: AttributeType, value: Scalar, path: (string | number)[]): Issue[] {
  const fail = (message: string) => [{ path, message }];
  switch (kind.type) {
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return fail("must be a number");
      if (kind.integer && !Number.isInteger(value)) return fail("must be an integer");
      if (value < kind.min || value > kind.max) {
        return fail(`must be between ${kind.min} and ${kind.max}`);
      }
      return [];
    case "boolean":
      return typeof value === "boolean" ? [] : fail("must be true or false");
    case "string":
      if (typeof value !== "string") return fail("must be a string");
      if (kind.pattern && !kind.pattern.test(value)) return fail(`must be ${kind.shape}`);
      return [];
    case "enum":
    case "set":
      return typeof value === "string" && kind.values.includes(value)
        ? []
        : fail(`must be one of ${kind.values.join(", ")}`);
  }
}
