import { ATTRIBUTES, type AttributeType, MEASURES, PERS } from "../assess/rules/attributes";
import { MAX_WINDOW_SECONDS } from "../assess/rules/duration";
import { GRAMMAR_VERSION, LIMITS, OPERATORS } from "../assess/rules/grammar";

/**
 * The rule language as the served reference (`/docs`) shows it: a section of the OpenAPI
 * document's `info.description`, written from the attribute table and the operators the
 * validator uses, so the page cannot drift from what a policy is checked against. Its
 * headings are the anchors of RULES_REFERENCE (src/assess/rules/reference.ts), which error
 * messages and the console link to.
 */

function typeOf(kind: AttributeType): string {
  switch (kind.type) {
    case "number":
      return `${kind.integer ? "integer" : "number"} ${kind.min}–${
        kind.max === Number.MAX_SAFE_INTEGER ? "2^53 − 1" : kind.max
      }`;
    case "string":
      return kind.shape ? `string, ${kind.shape}` : "string";
    case "boolean":
      return "boolean";
    case "enum":
      return kind.ordered
        ? `ordered enum ${kind.values.map((v) => `\`${v}\``).join(" < ")}`
        : `enum ${kind.values.map((v) => `\`${v}\``).join(" ")}`;
    case "set":
      return `set of ${kind.values.length} signal types (\`contains\`: one of ${kind.values
        .map((v) => `\`${v}\``)
        .join(", ")})`;
  }
}

const OPERATOR_ROWS: [string, string, string][] = [
  ["`eq`, `ne`", "number, string, enum, boolean", "one value of the attribute's type"],
  ["`lt`, `lte`, `gt`, `gte`", "number, ordered enum (by rank)", "one value"],
  ["`between`", "number", "`[low, high]`, inclusive, low ≤ high"],
  ["`in`, `not_in`", "number, string, enum, boolean", `a list (1–${LIMITS.values}) of values`],
  ["`contains`", "set (`signals`)", "one member"],
  ["`contains_any`, `contains_all`", "set", "a list of members"],
  ["`exists`", "any", "`true` or `false`: the value is (not) null"],
];

/** The markdown of the reference's "Policy rules" section. */
export function rulesReference(): string {
  const listed = new Set(OPERATOR_ROWS.flatMap(([ops]) => ops.match(/[a-z_]+/g) ?? []));
  const missing = OPERATORS.filter((op) => !listed.has(op));
  if (missing.length > 0) throw new Error(`rules reference: no row for ${missing.join(", ")}`);
  return [
    "## Policy rules",
    "",
    "A policy's `rules` (`POST /v1/policies`) holds the limits of the create shape and, " +
      "optionally, an ordered rule list. Every field is optional; `{}` allows everything.",
    "",
    "- `max_amount`: the largest amount, in **ISO 4217 minor units** of the action's currency " +
      "(`215000` is 2,150.00 USD; JPY has no minor unit, so `215000` is ¥215,000).",
    '- `currencies`: the ISO 4217 codes allowed (`["EUR", "USD"]`).',
    "- `geo.allow`: the ISO 3166-1 alpha-2 countries a request may come from.",
    "- `velocity`: `{window, max}`, at most `max` assessments per agent per `window` " +
      `(\`30s\`, \`15m\`, \`1h\`, \`7d\` or ISO 8601 \`PT15M\`, \`P7D\`; 1 s to ${
        MAX_WINDOW_SECONDS / 86_400
      } d).`,
    `- \`grammar\`: \`${GRAMMAR_VERSION}\`, required with \`rules\`.`,
    `- \`rules\`: up to ${LIMITS.rules} rules \`{id, action, when, description?}\`; the first ` +
      "whose condition holds decides (`approve`, `review` or `deny`).",
    "",
    'A condition (`when`) is exactly one of `{"all": [...]}`, `{"any": [...]}`, ' +
      '`{"not": {...}}` or a comparison `{"attr", "op", "value"}`, nested at most ' +
      `${LIMITS.depth} deep. A value the request does not give is null ("not known"): a ` +
      "comparison with it is neither true nor false, so `not` of it does not match either. " +
      "A condition that could never be evaluated (an unknown attribute, an operator that does " +
      "not apply, a value of the wrong type) is refused when the policy is created: a 400 " +
      "`invalid_request` whose `details[].path` names it (`rules.rules.0.when.any.1.value`).",
    "",
    "### Rule attributes",
    "",
    "| attribute | type |",
    "| --- | --- |",
    ...Object.entries(ATTRIBUTES).map(
      ([name, attribute]) => `| \`${name}\` | ${typeOf(attribute.kind)} |`,
    ),
    `| \`<measure>.<per>.<window>\` | window aggregates: \`<measure>\` ${MEASURES.map((m) => `\`${m}\``).join(" or ")}, \`<per>\` ${PERS.map((p) => `\`${p}\``).join(", ")}, \`<window>\` a duration as for \`velocity.window\`; at most ${LIMITS.aggregates} distinct per policy |`,
    "",
    "Amounts (`amount`, `sum.*`) are minor units of the request's own currency; time is UTC.",
    "",
    "### Rule operators",
    "",
    "| op | applies to | value |",
    "| --- | --- | --- |",
    ...OPERATOR_ROWS.map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");
}
