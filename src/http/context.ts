import type { Context } from "hono";
import type { Tenant } from "../auth/tenant";
import type { Env } from "../env";

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /**
     * The request's tenant, set by `authorize` on every guarded route (the only routes that
     * read it); public routes have none.
     */
    tenant: Tenant;
    /** True where a verified session is the whole check (see AuthorizeOptions.orgless). */
    orgless: boolean;
  };
}

export type AppContext = Context<AppEnv>;
