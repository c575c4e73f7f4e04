/**
 * The comparison operators of grammar 1, apart from the schema that checks them (grammar.ts),
 * so that the console's condition editor can name them without bundling zod.
 */
export const OPERATORS = [
  "eq",
  "ne",
  "lt",
  "lte",
  "gt",
  "gte",
  "between",
  "in",
  "not_in",
  "contains",
  "contains_any",
  "contains_all",
  "exists",
] as const;
export type Operator = (typeof OPERATORS)[number];
