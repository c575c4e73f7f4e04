import type { components } from "@agent-risk/client";
import { OPERATORS } from "../../../src/assess/rules/operators";
import { RULES_REFERENCE } from "../../../src/assess/rules/reference";
import { DECISIONS } from "../../../src/schemas/vocabulary";
import { fromMinor, toMinor } from "../format";

// The policy editor's model: the create shape's limits as a person types them (an amount in
// major units with its currency, code lists, a velocity as a count per duration), the rule list
// as one entry per rule, and the server's 400 details sorted to the field they name, so each
// fault shows next to what it is about (`details[].path` names the body's path).

export type PolicyRules = components["schemas"]["PolicyRules"];
export type PolicyRule = components["schemas"]["PolicyRule"];
export type Issue = { path: string; message: string };

export const GRAMMAR = 1;
/** The actions a rule can take: the decisions. */
export const ACTIONS = DECISIONS;
/** The served reference's rule language, where a condition's faults link to. */
export const GRAMMAR_LINKS = RULES_REFERENCE;

/** The units a velocity window is typed in, with their seconds. */
export const WINDOW_UNITS = [
  { unit: "s", label: "seconds", seconds: 1 },
  { unit: "m", label: "minutes", seconds: 60 },
  { unit: "h", label: "hours", seconds: 3_600 },
  { unit: "d", label: "days", seconds: 86_400 },
] as const;
export type WindowUnit = (typeof WINDOW_UNITS)[number]["unit"];

/** One rule as the editor holds it: its condition as text, so a half-typed one is kept. */
export interface RuleDraft {
  key: number;
  id: string;
  action: (typeof ACTIONS)[number];
  description: string;
  when: string;
}

export interface PolicyDraft {
  name: string;
  /** The largest amount as typed, in major units of `amountCurrency` ("" for no limit). */
  maxAmount: string;
  /** The currency whose exponent turns `maxAmount` into minor units. */
  amountCurrency: string;
  /** Allowed currencies (ISO 4217); empty: any. */
  currencies: string[];
  /** Allowed countries (ISO 3166-1 alpha-2); empty: any. */
  countries: string[];
  /** Assessments allowed per agent per window ("" for no velocity limit). */
  velocityMax: string;
  velocityWindow: string;
  velocityUnit: WindowUnit;
  rules: RuleDraft[];
}

let nextKey = 1;

export function newRule(index: number): RuleDraft {
  return {
    key: nextKey++,
    id: `rule-${index + 1}`,
    action: "review",
    description: "",
    when: JSON.stringify({ attr: "amount", op: "gt", value: 50000 }, null, 2),
  };
}

const DURATION = /^(\d+)([smhd])$/;
const ISO_DURATION = /^P(?:(\d+)W|(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?)$/;

/** A velocity window (`1h`, `PT15M`, `P7D`) in seconds, or null. */
export function windowSeconds(window: string): number | null {
  const short = DURATION.exec(window);
  if (short) {
    const unit = WINDOW_UNITS.find((u) => u.unit === short[2]);
    return unit ? Number(short[1]) * unit.seconds : null;
  }
  const iso = ISO_DURATION.exec(window);
  if (!iso || window === "P" || window.endsWith("T")) return null;
  const [w, d, h, m, s] = iso.slice(1).map((part) => Number(part ?? 0));
  return (w ?? 0) * 604_800 + (d ?? 0) * 86_400 + (h ?? 0) * 3_600 + (m ?? 0) * 60 + (s ?? 0);
}

/** Seconds as the largest unit that divides them: 3600 → 1 hours, 90 → 90 seconds. */
export function windowOf(seconds: number): { value: string; unit: WindowUnit } {
  const unit = [...WINDOW_UNITS].reverse().find((u) => seconds % u.seconds === 0);
  return unit
    ? { value: String(seconds / unit.seconds), unit: unit.unit }
    : { value: String(seconds), unit: "s" };
}

/**
 * The draft for a policy's rules. `max_amount` is one number of minor units applied to the
 * action's own currency: it is shown in the first allowed currency (USD without a list).
 */
export function draftOf(name: string, rules: PolicyRules | undefined): PolicyDraft {
  const amountCurrency = rules?.currencies?.[0] ?? "USD";
  const seconds = rules?.velocity ? windowSeconds(rules.velocity.window) : null;
  const window = seconds === null ? { value: "1", unit: "h" as const } : windowOf(seconds);
  return {
    name,
    maxAmount: rules?.max_amount === undefined ? "" : fromMinor(rules.max_amount, amountCurrency),
    amountCurrency,
    currencies: [...(rules?.currencies ?? [])],
    countries: [...(rules?.geo?.allow ?? [])],
    velocityMax: rules?.velocity ? String(rules.velocity.max) : "",
    velocityWindow: window.value,
    velocityUnit: window.unit,
    rules: (rules?.rules ?? []).map((rule) => ({
      key: nextKey++,
      id: rule.id,
      action: rule.action,
      description: rule.description ?? "",
      when: JSON.stringify(rule.when, null, 2),
    })),
  };
}

/** The limit fields of the form, each the body member it writes. */
export type LimitField = "max_amount" | "currencies" | "geo" | "velocity";
const LIMIT_FIELDS: readonly string[] = ["max_amount", "currencies", "geo", "velocity"];

/** Where a fault belongs in the editor. */
export interface DraftIssues {
  name: string[];
  limits: Map<LimitField, string[]>;
  /** By rule index, then by field (`id`, `action`, `description`, `when`, or `""`: the rule). */
  rules: Map<number, Map<string, string[]>>;
  /** Anything else (the rule list as a whole, the body). */
  other: string[];
}

export function emptyIssues(): DraftIssues {
  return { name: [], limits: new Map(), rules: new Map(), other: [] };
}

function addRuleIssue(issues: DraftIssues, index: number, field: string, message: string) {
  const fields = issues.rules.get(index) ?? new Map<string, string[]>();
  fields.set(field, [...(fields.get(field) ?? []), message]);
  issues.rules.set(index, fields);
}

function addLimitIssue(issues: DraftIssues, field: LimitField, message: string) {
  issues.limits.set(field, [...(issues.limits.get(field) ?? []), message]);
}

const RULE_FIELDS = new Set(["id", "action", "description", "when"]);

/** Counts the faults of every field. */
export function issueCount(issues: DraftIssues): number {
  let n = issues.name.length + issues.other.length;
  for (const list of issues.limits.values()) n += list.length;
  for (const fields of issues.rules.values()) for (const list of fields.values()) n += list.length;
  return n;
}

/**
 * Sorts the `details` of a 400 by what they name: `rules.rules.<i>.<field>…` goes to rule i
 * (the rest of the path, inside its condition, is kept in the message: `when.any.1.value`),
 * `rules.<limit>…` to that limit's field (`rules.currencies.1` to the currencies, with `1`),
 * `name` to the name.
 */
export function sortIssues(details: unknown): DraftIssues {
  const issues = emptyIssues();
  if (!Array.isArray(details)) return issues;
  for (const detail of details as Partial<Issue>[]) {
    const path = typeof detail?.path === "string" ? detail.path : "";
    const message = typeof detail?.message === "string" ? detail.message : "is invalid";
    const parts = path === "" ? [] : path.split(".");
    if (parts[0] === "name") {
      issues.name.push(message);
    } else if (parts[0] === "rules" && parts[1] === "rules" && /^\d+$/.test(parts[2] ?? "")) {
      const index = Number(parts[2]);
      const field = parts[3] ?? "";
      const inner = parts.slice(4).join(".");
      if (RULE_FIELDS.has(field)) {
        addRuleIssue(
          issues,
          index,
          field,
          inner ? `${[field, inner].join(".")}: ${message}` : message,
        );
      } else {
        addRuleIssue(issues, index, "", field ? `${field}: ${message}` : message);
      }
    } else if (parts[0] === "rules" && LIMIT_FIELDS.includes(parts[1] ?? "")) {
      const inner = parts.slice(2).join(".");
      addLimitIssue(issues, parts[1] as LimitField, inner ? `${inner}: ${message}` : message);
    } else {
      issues.other.push(path ? `${path}: ${message}` : message);
    }
  }
  return issues;
}

const FORMS = ["all", "any", "not"] as const;
const COMPARISON = ["attr", "op", "value"] as const;

/**
 * What the editor can tell of a condition before sending it: its shape (exactly one form per
 * node, known keys and operators, non-empty lists), each fault with its path inside the
 * condition. Whether an attribute exists and takes that operator and value is the server's to
 * say (its 400 lands on the same field).
 */
export function conditionFaults(node: unknown, path = "when"): string[] {
  if (typeof node !== "object" || node === null || Array.isArray(node)) {
    return [`${path}: must be an object, such as {"attr": "amount", "op": "gt", "value": 50000}`];
  }
  const keys = Object.keys(node);
  const unknown = keys.filter(
    (key) =>
      !(FORMS as readonly string[]).includes(key) &&
      !(COMPARISON as readonly string[]).includes(key),
  );
  if (unknown.length > 0) return [`${path}: unknown key ${unknown.join(", ")}`];
  const forms = FORMS.filter((form) => keys.includes(form));
  const comparison = COMPARISON.some((key) => keys.includes(key));
  if (forms.length + (comparison ? 1 : 0) !== 1) {
    return [
      `${path}: must be exactly one of {all}, {any}, {not} or a comparison {attr, op, value}`,
    ];
  }
  const record = node as Record<string, unknown>;
  const form = forms[0];
  if (form === "not") return conditionFaults(record.not, `${path}.not`);
  if (form === "all" || form === "any") {
    const children = record[form];
    if (!Array.isArray(children) || children.length === 0) {
      return [`${path}.${form}: must be a non-empty list of conditions`];
    }
    return children.flatMap((child, index) => conditionFaults(child, `${path}.${form}.${index}`));
  }
  const faults: string[] = [];
  if (typeof record.attr !== "string" || record.attr === "") faults.push(`${path}.attr: required`);
  if (!(OPERATORS as readonly unknown[]).includes(record.op)) {
    faults.push(`${path}.op: must be one of ${OPERATORS.join(", ")}`);
  }
  if (record.value === undefined) faults.push(`${path}.value: required`);
  return faults;
}

/** A rule's condition text: its value, or the faults found in it. */
export function parseCondition(
  text: string,
): { ok: true; when: unknown } | { ok: false; faults: string[] } {
  let when: unknown;
  try {
    when = JSON.parse(text);
  } catch (error) {
    return { ok: false, faults: [`not JSON: ${(error as Error).message}`] };
  }
  const faults = conditionFaults(when);
  return faults.length > 0 ? { ok: false, faults } : { ok: true, when };
}

/** The body's `rules` limits from the form's fields, with the faults found in them. */
function limitsOf(draft: PolicyDraft, issues: DraftIssues): Partial<PolicyRules> {
  const limits: Partial<PolicyRules> = {};
  if (draft.maxAmount.trim() !== "") {
    const amount = toMinor(draft.maxAmount, draft.amountCurrency);
    if (amount.ok) limits.max_amount = amount.minor;
    else addLimitIssue(issues, "max_amount", amount.message);
  }
  if (draft.currencies.length > 0) limits.currencies = [...draft.currencies];
  if (draft.countries.length > 0) limits.geo = { allow: [...draft.countries] };
  const max = draft.velocityMax.trim();
  if (max !== "") {
    const count = Number(max);
    const value = Number(draft.velocityWindow.trim());
    if (!/^\d+$/.test(max) || count < 1) {
      addLimitIssue(issues, "velocity", "the count must be a whole number of 1 or more");
    } else if (!/^\d+$/.test(draft.velocityWindow.trim()) || value < 1) {
      addLimitIssue(issues, "velocity", "the window must be a whole number of 1 or more");
    } else {
      limits.velocity = { max: count, window: `${value}${draft.velocityUnit}` };
    }
  }
  return limits;
}

/**
 * The request body for a draft, or the faults found before sending it (an amount that is not
 * one, a condition that does not parse): those show at their field as the server's would.
 */
export function bodyOf(
  draft: PolicyDraft,
): { ok: true; body: { name: string; rules: PolicyRules } } | { ok: false; issues: DraftIssues } {
  const issues = emptyIssues();
  const limits = limitsOf(draft, issues);
  const rules = draft.rules.map((rule, index) => {
    const parsed = parseCondition(rule.when);
    if (!parsed.ok) for (const fault of parsed.faults) addRuleIssue(issues, index, "when", fault);
    return {
      id: rule.id,
      action: rule.action,
      when: parsed.ok ? parsed.when : undefined,
      ...(rule.description.trim() === "" ? {} : { description: rule.description }),
    };
  });
  if (issues.limits.size > 0 || issues.rules.size > 0) return { ok: false, issues };
  const body = {
    name: draft.name,
    rules: {
      ...limits,
      ...(rules.length > 0 ? { grammar: GRAMMAR, rules } : {}),
    } as PolicyRules,
  };
  return { ok: true, body };
}
