import {
  type AggregateSpec,
  type AttributeType,
  attributeOf,
  type RuleSubject,
  type Scalar,
} from "./attributes";
import {
  aggregatesOf,
  type ConditionNode,
  nodeIssues,
  type Rule,
  type RuleAction,
} from "./grammar";

/**
 * Evaluation of grammar 1, in three-valued logic: a comparison with a value the request or
 * its context does not give is unknown, `not` of unknown is unknown, `all` is false if any
 * child is false, `any` true if any child is true, and a rule matches only when its condition
 * is true. So a missing value never makes a rule match by accident, whichever way it is
 * negated; `exists` asks the question explicitly. Conditions are compiled once into closures:
 * a backtest runs the same policy over many assessments.
 */

type Truth = boolean | null;
type Test = (subject: RuleSubject) => Truth;

export interface CompiledRule {
  id: string;
  /** 0-based position in the list. */
  index: number;
  action: RuleAction;
  description: string | null;
  test: Test;
}

export interface Program {
  rules: CompiledRule[];
  /** The window aggregates the rules read, for the context query (and the backtest) to count. */
  aggregates: AggregateSpec[];
}

/** Compiles a rule list the schema accepted; throws on anything it would have refused. */
export function compileRules(rules: readonly Rule[]): Program {
  return {
    rules: rules.map((rule, index) => ({
      id: rule.id,
      index,
      action: rule.action,
      description: rule.description ?? null,
      test: compile(rule.when),
    })),
    aggregates: aggregatesOf(rules),
  };
}

/** The first rule whose condition is true, or null. */
/**
 * The first rule whose condition is true, among the rules that may decide: `eligible` lets
 * the caller pass over rules that cannot apply (an approve rule where approving is barred),
 * so a later rule still gets its turn.
 */
export function firstMatch(
  program: Program,
  subject: RuleSubject,
  eligible: (rule: CompiledRule) => boolean = () => true,
): CompiledRule | null {
  for (const rule of program.rules) {
    if (eligible(rule) && rule.test(subject) === true) return rule;
  }
  return null;
}

function compile(node: ConditionNode): Test {
  const issue = nodeIssues(node)[0];
  if (issue) throw new Error(`rule condition: ${issue.path.join(".")} ${issue.message}`);
  if (node.all) return allOf(node.all.map(compile));
  if (node.any) return anyOf(node.any.map(compile));
  if (node.not) {
    const inner = compile(node.not);
    return (s) => {
      const value = inner(s);
      return value === null ? null : !value;
    };
  }
  const attribute = attributeOf(node.attr as string);
  if (typeof attribute === "string") throw new Error(`rule condition: ${attribute}`);
  return comparison(attribute.kind, attribute.read, node.op as string, node.value);
}

function allOf(tests: Test[]): Test {
  return (s) => {
    let unknown = false;
    for (const test of tests) {
      const value = test(s);
      if (value === false) return false;
      if (value === null) unknown = true;
    }
    return unknown ? null : true;
  };
}

function anyOf(tests: Test[]): Test {
  return (s) => {
    let unknown = false;
    for (const test of tests) {
      const value = test(s);
      if (value === true) return true;
      if (value === null) unknown = true;
    }
    return unknown ? null : false;
  };
}

type Read = (s: RuleSubject) => Scalar | ReadonlySet<string> | null;

function comparison(kind: AttributeType, read: Read, op: string, value: unknown): Test {
  if (op === "exists") return (s) => (read(s) !== null) === value;
  const known = (test: (actual: never) => boolean): Test => {
    return (s) => {
      const actual = read(s);
      return actual === null ? null : test(actual as never);
    };
  };
  // Ordered enums compare by rank: `agent.risk_tier gte high` is high or critical.
  const rank =
    kind.type === "enum" && kind.ordered
      ? (v: Scalar) => kind.values.indexOf(v as string)
      : (v: Scalar) => v as number;
  switch (op) {
    case "eq":
      return known((a: Scalar) => a === value);
    case "ne":
      return known((a: Scalar) => a !== value);
    case "lt":
      return known((a: Scalar) => rank(a) < rank(value as Scalar));
    case "lte":
      return known((a: Scalar) => rank(a) <= rank(value as Scalar));
    case "gt":
      return known((a: Scalar) => rank(a) > rank(value as Scalar));
    case "gte":
      return known((a: Scalar) => rank(a) >= rank(value as Scalar));
    case "between": {
      const [low, high] = value as [number, number];
      return known((a: number) => a >= low && a <= high);
    }
    case "in": {
      const set = new Set(value as Scalar[]);
      return known((a: Scalar) => set.has(a));
    }
    case "not_in": {
      const set = new Set(value as Scalar[]);
      return known((a: Scalar) => !set.has(a));
    }
    case "contains":
      return known((a: ReadonlySet<string>) => a.has(value as string));
    case "contains_any":
      return known((a: ReadonlySet<string>) => (value as string[]).some((v) => a.has(v)));
    case "contains_all":
      return known((a: ReadonlySet<string>) => (value as string[]).every((v) => a.has(v)));
    default:
      throw new Error(`rule condition: unknown operator ${op}`);
  }
}
