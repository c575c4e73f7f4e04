/** `npm run client:generate`: rewrites the client package's types from the app's OpenAPI. */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { CLIENT_TYPES_PATH, renderClientTypes } from "./client-types";

await mkdir(dirname(CLIENT_TYPES_PATH), { recursive: true });
await writeFile(CLIENT_TYPES_PATH, await renderClientTypes());
process.stderr.write(`wrote ${CLIENT_TYPES_PATH}\n`);
