import { hostileInputTests } from "./support/hostile";

// Shard 2 of 4 of the hostile-input suite (see support/hostile.ts).
hostileInputTests(2, 4);
