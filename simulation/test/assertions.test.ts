// A failed assertion inside the node fails the seed with its message and the seed (not a hang, not swallowed).
import { beforeAll, describe, expect, it } from "vitest"
import { preloadSandbox } from "@vellum/projections"
import { AssertionFailed } from "@vellum/platform"
import type { EventStoreService } from "@vellum/storage"
import { runSeed } from "../src/runSeed.js"

/** Plants a broken invariant in the writer's round: the 3rd commit of a lifetime fails an assertion. */
const plantInWriter = (store: EventStoreService) => {
  let commits = 0
  return store.onCommit(() => {
    if (++commits === 3) throw new AssertionFailed("planted: the writer's round broke an invariant")
  })
}

// Some swarm seeds run the projections workload, whose user projections need QuickJS loaded before the world runs.
beforeAll(() => preloadSandbox())

describe("simulator: assertions inside the node", () => {
  for (const transport of ["http", "direct"] as const) {
    it(`${transport}: a failed assertion in the writer fails the seed with its message`, () => {
      const r = runSeed(3, { transport, onOpen: plantInWriter })
      expect(r.ok).toBe(false)
      expect(r.failure).toBe("assertion failed in the node: planted: the writer's round broke an invariant")
    })
  }

  it("the same seed passes without the planted fault", () => {
    expect(runSeed(3, { transport: "direct" }).ok).toBe(true)
  })
})
