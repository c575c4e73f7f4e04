import { hostileInputTests } from "./support/hostile";

// Shard 3 of 4 of the hostile-input suite (see support/hostile.ts).
hostileInputTests(3, 4);
