import { commonRouteTests } from "./support/common-routes";

// Shard 1 of 4 of the route table (see support/common-routes.ts).
commonRouteTests(1, 4);
