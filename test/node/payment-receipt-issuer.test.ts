import { describe, expect, it } from "vitest";
import { namesIssuer } from "../../src/payment-receipts/receipt-issuer";

// docs/credentials.md, "Payment receipts": which credential issuer a signed receipt's `iss`
// names, so whose keys verify it.

const ID = "01a1a0dd-7c30-7e58-b1a4-0e9d52c6f3a8";
const inline = { id: ID, name: "Acme PSP", jwksUrl: null };
const published = {
  id: ID,
  name: "Acme PSP",
  jwksUrl: "https://psp.example/.well-known/jwks.json",
};

describe("the issuer a receipt's iss names", () => {
  it("is the one whose id or name it is", () => {
    expect(namesIssuer(inline, ID)).toBe(true);
    expect(namesIssuer(inline, "Acme PSP")).toBe(true);
    expect(namesIssuer(inline, "acme psp")).toBe(false);
    expect(namesIssuer(inline, "https://psp.example")).toBe(false);
  });

  it("is the one whose JWKS URL has its origin or host", () => {
    expect(namesIssuer(published, "https://psp.example")).toBe(true);
    expect(namesIssuer(published, "psp.example")).toBe(true);
    expect(namesIssuer(published, "https://psp.example/")).toBe(false);
    expect(namesIssuer(published, "http://psp.example")).toBe(false);
    expect(namesIssuer(published, "evil.example")).toBe(false);
  });
});
