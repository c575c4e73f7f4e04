import { describe, expect, it } from "vitest";
import { match, type Page } from "../../console/src/router";

// The console's hash router (console/src/router.ts): a link's parameters are URL-decoded, and a
// malformed `%` escape must give "no route" (the not-found page), not a URIError during render.

const list: Page = () => null;
const detail: Page = () => null;
const routes: Record<string, Page> = { assessments: list, "assessments/:id": detail };

describe("match", () => {
  it("decodes a parameter", () => {
    expect(match(routes, "assessments/a%2Fb%20c")).toEqual({ page: detail, params: ["a/b c"] });
  });

  it("matches nothing for a malformed escape instead of throwing", () => {
    expect(match(routes, "assessments/%E0%A4")).toBeUndefined();
    expect(match(routes, "assessments/%")).toBeUndefined();
    expect(match(routes, "assessments/%zz")).toBeUndefined();
  });

  it("still matches the routes without parameters", () => {
    expect(match(routes, "assessments")).toEqual({ page: list, params: [] });
    expect(match(routes, "nope")).toBeUndefined();
  });
});
