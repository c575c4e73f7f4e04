import { hostileInputTests } from "./support/hostile";

// Shard 1 of 4 of the hostile-input suite (see support/hostile.ts).
hostileInputTests(1, 4);
