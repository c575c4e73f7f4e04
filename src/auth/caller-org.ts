import { eq } from "drizzle-orm";
import { organizations } from "../db/schema";
import { currentOrg } from "../db/tables/columns";
import { ApiError } from "../errors";
import type { Tenant } from "./tenant";

/** The name of the caller's org, read in the credential check's round trip. */
export async function callerOrgName(tenant: Tenant): Promise<string> {
  // RLS shows the org's row only once the credential check has set the org (a session may see
  // every org it belongs to: the chosen one here).
  const [org] = await tenant.batch((db) => [
    db
      .select({ name: organizations.name })
      .from(organizations)
      .where(eq(organizations.id, currentOrg)),
  ]);
  const name = org[0]?.name;
  if (name === undefined) throw new ApiError("internal_error");
  return name;
}
