// One copy, shared with the client package (docs/architecture.md, "The client package").
export * from "../../packages/client/src/audit/merkle";
