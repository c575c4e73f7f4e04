import { hostileInputTests } from "./support/hostile";

// Shard 4 of 4 of the hostile-input suite (see support/hostile.ts).
hostileInputTests(4, 4);
