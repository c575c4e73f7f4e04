import { commonRouteTests } from "./support/common-routes";

// Shard 4 of 4 of the route table (see support/common-routes.ts).
commonRouteTests(4, 4);
