import type { components } from "@agent-risk/client";
import { DECISIONS } from "../../../src/schemas/vocabulary";

// The policy editor's model: the create-shape limits as one JSON text, the rule list as one
// entry per rule, and the server's 400 details sorted to the field they name, so each fault
// shows next to the rule it is about (docs/rules.md: `details[].path` names the body's path).

export type PolicyRules = components["schemas"]["PolicyRules"];
export type PolicyRule = components["schemas"]["PolicyRule"];
export type Issue = { path: string; message: string };

export const GRAMMAR = 1;
/** The actions a rule can take: the decisions. */
export const ACTIONS = DECISIONS;

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
  /** `max_amount`, `currencies`, `geo`, `velocity` as JSON text. */
  limits: string;
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

/** The draft for a policy's rules (a new draft: empty limits, no rules). */
export function draftOf(name: string, rules: PolicyRules | undefined): PolicyDraft {
  const { rules: list, grammar: _grammar, ...limits } = rules ?? {};
  return {
    name,
    limits: JSON.stringify(limits, null, 2),
    rules: (list ?? []).map((rule) => ({
      key: nextKey++,
      id: rule.id,
      action: rule.action,
      description: rule.description ?? "",
      when: JSON.stringify(rule.when, null, 2),
    })),
  };
}

/** Where a fault belongs in the editor. */
export interface DraftIssues {
  name: string[];
  limits: string[];
  /** By rule index, then by field (`id`, `action`, `description`, `when`, or `""`: the rule). */
  rules: Map<number, Map<string, string[]>>;
  /** Anything else (the rule list as a whole, the body). */
  other: string[];
}

export function emptyIssues(): DraftIssues {
  return { name: [], limits: [], rules: new Map(), other: [] };
}

function addRuleIssue(issues: DraftIssues, index: number, field: string, message: string) {
  const fields = issues.rules.get(index) ?? new Map<string, string[]>();
  fields.set(field, [...(fields.get(field) ?? []), message]);
  issues.rules.set(index, fields);
}

const RULE_FIELDS = new Set(["id", "action", "description", "when"]);

/**
 * Sorts the `details` of a 400 by what they name: `rules.rules.<i>.<field>…` goes to rule i
 * (the rest of the path, inside its condition, is kept in the message: `when.any.1.value`),
 * `rules.<limit>…` to the limits, `name` to the name.
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
    } else if (parts[0] === "rules" && parts.length > 1 && parts[1] !== "rules") {
      issues.limits.push(`${parts.slice(1).join(".")}: ${message}`);
    } else {
      issues.other.push(path ? `${path}: ${message}` : message);
    }
  }
  return issues;
}

/**
 * The request body for a draft, or the faults found before sending it (text that is not
 * JSON): those show at their field as the server's would.
 */
export function bodyOf(
  draft: PolicyDraft,
): { ok: true; body: { name: string; rules: PolicyRules } } | { ok: false; issues: DraftIssues } {
  const issues = emptyIssues();
  let limits: Record<string, unknown> = {};
  try {
    const parsed: unknown = draft.limits.trim() === "" ? {} : JSON.parse(draft.limits);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      issues.limits.push("must be a JSON object");
    } else limits = parsed as Record<string, unknown>;
  } catch (error) {
    issues.limits.push(`not JSON: ${(error as Error).message}`);
  }
  const rules = draft.rules.map((rule, index) => {
    let when: unknown;
    try {
      when = JSON.parse(rule.when);
    } catch (error) {
      addRuleIssue(issues, index, "when", `not JSON: ${(error as Error).message}`);
    }
    return {
      id: rule.id,
      action: rule.action,
      when,
      ...(rule.description.trim() === "" ? {} : { description: rule.description }),
    };
  });
  if (issues.limits.length > 0 || issues.rules.size > 0) return { ok: false, issues };
  const body = {
    name: draft.name,
    rules: {
      ...limits,
      ...(rules.length > 0 ? { grammar: GRAMMAR, rules } : {}),
    } as PolicyRules,
  };
  return { ok: true, body };
}
