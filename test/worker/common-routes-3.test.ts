import { commonRouteTests } from "./support/common-routes";

// Shard 3 of 4 of the route table (see support/common-routes.ts).
commonRouteTests(3, 4);
