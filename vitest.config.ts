import { defineConfig } from "vitest/config"

// One vitest run covers every workspace's tests. Property and simulator tests are bounded here
// (seed counts, numRuns) so `npm test` stays well inside 15 minutes on 2 cores; longer runs live
// behind `npm run sim:soak`.
export default defineConfig({
  test: {
    include: [
      "packages/*/test/**/*.test.ts",
      "property-tests/test/**/*.test.ts",
      "simulation/test/**/*.test.ts",
      "bench/test/**/*.test.ts",
      "test/**/*.test.ts"
    ],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ["default", "./test/summaryReporter.ts"]
  }
})
