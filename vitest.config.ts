import { defineConfig } from "vitest/config";

// No test ends by the clock: the machine running them is shared, and a test that waits longer
// under load is slow, not wrong. 0 disables vitest's test and hook timeouts; expect.poll takes
// the largest delay a Node timer holds (about 24.8 days). A test that hangs is stopped by whoever
// runs the suite, never by a timeout here. test/timeouts.test.ts keeps the tests free of their own.
const NO_TIMEOUT = 0;
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/build.ts"],
    testTimeout: NO_TIMEOUT,
    hookTimeout: NO_TIMEOUT,
    expect: { poll: { timeout: LONGEST_TIMER_MS } },
    pool: "forks",
  },
});
