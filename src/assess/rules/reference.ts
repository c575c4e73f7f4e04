/**
 * Where the served API reference (`GET /docs`, rendered from the OpenAPI document's
 * `info.description`) documents the rule language: the address that error messages and the
 * console point people to, never a file of the repository they do not have. Scalar gives each
 * heading of the description an anchor `#description/<slug>`; src/http/rules-reference.ts
 * writes the headings these name.
 */
export const RULES_REFERENCE = {
  /** "## Policy rules": the create shape and the rule language. */
  section: "/docs#description/policy-rules",
  /** "### Rule attributes": what a comparison can read. */
  attributes: "/docs#description/rule-attributes",
  /** "### Rule operators": which operator applies to which attribute type. */
  operators: "/docs#description/rule-operators",
} as const;
