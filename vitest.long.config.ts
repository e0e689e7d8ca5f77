import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

// The tests too long for `npm test` (`*.long-test.ts`), each run by its own npm script, which names the
// file: `npm run test:auto-scavenge-cluster`.
export default defineConfig({
  ...base,
  test: { ...base.test, include: ["packages/*/test/**/*.long-test.ts"], testTimeout: 600_000 }
})
