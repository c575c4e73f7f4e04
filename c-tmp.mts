import { buildApp } from "./src/app";
import { contractViolations, servedRoutes } from "./test/support/openapi-contract";
const app = buildApp();
const doc = await (await app.request("/openapi.json")).json();
const v = contractViolations(doc, servedRoutes(app.routes), { undocumented: ["GET /openapi.json"], bodyless: [], freeForm: [] });
console.log(v.filter(x => !x.includes("no example")).join("\n"));
console.log(v.length, v.filter(x => x.includes("no example")).length);
