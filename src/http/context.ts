import type { Context } from "hono";
import type { Caller } from "../auth/caller";
import type { Credential } from "../auth/credential";
import type { ScopeRequirement } from "../auth/scopes";
import type { Env } from "../env";

/** Set by `authorize`: the presented credential and the scope the route needs. */
export interface AuthState {
  credential: Credential;
  scope: ScopeRequirement | null;
  /** True where a verified session is the whole check (see AuthorizeOptions.orgless). */
  orgless: boolean;
  /** Filled by the request's first database round trip (see db/tenant.ts). */
  caller?: Caller;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    auth?: AuthState;
  };
}

export type AppContext = Context<AppEnv>;
