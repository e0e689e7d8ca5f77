/**
 * Power loss in the middle of an appendRaw (a follower writing what it received, rolling its chunk over
 * when the slice completes one): after recovery the follower's writer checkpoint is where the slice
 * started or where it ended (never inside a unit), and following the leader from there gives its log
 * byte for byte. The cut lands before every mutating disk operation of the append in turn.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import type { RawSlice } from "../src/index.js"
import { evs, readAll } from "./streams-harness.js"
import { ID_A, clusteredConfig, cutDuring, follow, openGate, openNode, rawLog, sliceAt } from "./replica-support.js"

describe("replica: a crash inside appendRaw", () => {
  it.scoped("leaves the follower at a unit boundary, from which it follows the leader to the same log", () =>
    Effect.gen(function* () {
      const leader = yield* openNode()
      yield* leader.replica.lead(1, ID_A, openGate)
      for (let i = 0; i < 24; i++) yield* leader.store.append(`s${i % 3}`, -2, evs(i * 5, 5))
      yield* leader.store.writeScavengePoint(0, 0)
      yield* leader.store.append("last", -2, evs(500, 2))
      const slices: Array<RawSlice> = []
      for (let from = 0; ;) {
        const slice = yield* sliceAt(leader.replica, from, 900)
        if (slice === undefined) break
        slices.push(slice)
        from = slice.completesChunk
          ? (Math.floor(slice.end / leader.replica.chunkSize) + 1) * leader.replica.chunkSize
          : slice.end
      }
      const completing = slices.findIndex((s) => s.completesChunk)
      assert.isAtLeast(completing, 1, "a slice completes a chunk")
      const expected = yield* rawLog(leader.replica)
      const expectedEvents = yield* readAll(leader.store)
      const config = clusteredConfig
      let cuts = 0
      for (const target of [0, 1, completing]) {
        for (let budget = 0; ; budget++) {
          const slice = slices[target]!
          const { whole, mem } = yield* cutDuring(
            budget,
            (replica) => Effect.forEach(slices.slice(0, target), (s) => replica.appendRaw(s), { discard: true }),
            (replica) => replica.appendRaw(slice)
          )
          if (whole) break
          cuts++
          const follower = yield* openNode({ mem })
          const at = follower.replica.writerCheckpoint()
          const nextChunk = (Math.floor(slice.end / config.chunkSize) + 1) * config.chunkSize
          assert.include(
            [slice.position, slice.end, nextChunk],
            at,
            `cut before operation ${budget} of slice ${target}`
          )
          yield* follow(leader.replica, follower.replica)
          assert.deepStrictEqual(yield* rawLog(follower.replica), expected)
          assert.deepStrictEqual(yield* readAll(follower.store), expectedEvents)
        }
      }
      assert.isAtLeast(cuts, 8, "the cut landed inside several appends")
    })
  )
})
