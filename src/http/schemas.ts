import { z } from "@hono/zod-openapi";
import { ApiError, errorMessages, errorStatus } from "../errors";
import { isUuid } from "../lib/ids";

export const ErrorSchema = z
  .object({
    error: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus]).openapi({
      description: "Machine-readable error code: match on this",
    }),
    message: z.string().openapi({
      description: "One sentence for a person: what went wrong and what to do about it",
      example: errorMessages.not_found,
    }),
    details: z
      .unknown()
      .optional()
      .openapi({ description: "Structured details, e.g. failing paths" }),
    doc_url: z.url().optional().openapi({
      description: "The code's entry in the API reference (`<PUBLIC_BASE_URL>/docs#…`)",
      example: "https://risk.example.com/docs#description/not_found",
    }),
  })
  .openapi("ErrorResponse");

const describe: Record<number, string> = {
  400: "Malformed request",
  401: "Missing or invalid credential",
  402: "The spending cap is reached: an owner must confirm going further",
  403: "The credential lacks the required scope",
  404: "Not found in the caller's organization",
  409: "Conflicts with the current state",
  422: "Failed schema validation",
  429: "A rate limit is reached: retry after `Retry-After` seconds (docs/api.md, Rate limits)",
  500: "Internal error",
  503: "Database or signing key temporarily unavailable",
};

/** OpenAPI responses for the given error statuses, all with the one error envelope. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: describe[status] ?? "Error",
        content: { "application/json": { schema: ErrorSchema } },
      },
    ]),
  );
}

export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } };
}

export const IdParam = z.object({
  id: z.string().openapi({
    param: { name: "id", in: "path" },
    example: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
  }),
});

/**
 * A uuid path id, lowercased (the form Postgres answers with, so ids compare and key idempotency
 * the same whatever case the caller wrote); anything else can never name a row, so it is a
 * plain 404.
 */
export function rowId(id: string): string {
  if (!isUuid(id)) throw new ApiError("not_found");
  return id.toLowerCase();
}
