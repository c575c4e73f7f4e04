import { commonRouteTests } from "./support/common-routes";

// Shard 2 of 4 of the route table (see support/common-routes.ts).
commonRouteTests(2, 4);
