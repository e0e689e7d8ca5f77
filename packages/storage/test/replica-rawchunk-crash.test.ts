/**
 * Power loss in the middle of installing a scavenged chunk received whole: a follower that holds chunk 0
 * and part of chunk 1 installs the leader's file of chunks 0..2, and the power is cut before every mutating
 * disk operation of the install in turn (writing the pieces, syncing, checking, the rename, the removals,
 * the next chunk, the checkpoint). After recovery the follower is in its previous state (its writer
 * checkpoint where it was, its own files) or in the new one (the leader's file, the checkpoint at the
 * range's end), never a mix; and following the leader from there gives its log byte for byte.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import type { RawSlice } from "../src/index.js"
import { evs, json, ev, readAll } from "./streams-harness.js"
import { ID_A, chunkPieces, cutDuring, follow, openGate, openNode, rawLog, sliceAt } from "./replica-support.js"

describe("replica: a crash while a scavenged chunk is installed", () => {
  it.scoped(
    "leaves the follower's previous state or the new chunk, from which it follows the leader to the same log",
    () =>
      Effect.gen(function* () {
        const leader = yield* openNode()
        yield* leader.replica.lead(1, ID_A, openGate)
        yield* leader.store.append("$$capped", -2, [
          { ...ev(9000, { type: "$metadata" }), data: json({ $maxCount: 2 }) }
        ])
        for (let i = 0; leader.replica.writerCheckpoint() < 4 * leader.replica.chunkSize; i++)
          yield* leader.store.append(i % 3 === 0 ? "kept" : "capped", -2, evs(i * 10, 2))
        const chunkSize = leader.replica.chunkSize
        // What the follower holds before the leader scavenges: chunk 0 and part of chunk 1.
        const before: Array<RawSlice> = []
        for (let at = 0; at < chunkSize + 500;) {
          const slice = (yield* sliceAt(leader.replica, at, 300))!
          before.push(slice)
          at = slice.completesChunk ? (Math.floor(slice.end / chunkSize) + 1) * chunkSize : slice.end
        }
        const behind = before[before.length - 1]!.end
        yield* leader.store.engine.log.replaceChunks(
          0,
          2,
          (record) => record.stream !== "capped" || record.eventNumber % 3 === 0
        )
        const pieces = yield* chunkPieces(leader.replica, behind, 1500)
        assert.isAtLeast(pieces.length, 2, "the file comes in several pieces")
        const expected = yield* rawLog(leader.replica)
        const expectedEvents = yield* readAll(leader.store)
        const outcomes = new Set<string>()
        let cuts = 0
        for (let budget = 0; ; budget++) {
          const { whole, cutAt, mem } = yield* cutDuring(
            budget,
            (replica) =>
              Effect.gen(function* () {
                for (const slice of before) yield* replica.appendRaw(slice)
                assert.strictEqual(replica.writerCheckpoint(), behind)
              }),
            (replica) => Effect.forEach(pieces, (piece) => replica.installChunk(piece), { discard: true })
          )
          if (whole) break
          cuts++
          const follower = yield* openNode({ mem })
          const at = follower.replica.writerCheckpoint()
          assert.include([behind, 3 * chunkSize], at, `cut before operation ${budget} (${cutAt})`)
          const first = follower.store.engine.log.chunkAt(0)!
          if (at === behind) {
            // The previous state: the follower's own chunk 0, unscavenged, and chunk 1 being written.
            assert.isFalse(first.header.isScavenged, `cut before operation ${budget}: chunk 0 is the follower's`)
            assert.strictEqual(follower.store.engine.log.chunkAt(chunkSize), follower.store.engine.log.chunks().at(-1))
          } else {
            // The new state: the leader's file, whole.
            assert.strictEqual(first.header.chunkId, pieces[0]!.chunkId, `cut before operation ${budget}`)
          }
          outcomes.add(at === behind ? "previous" : "installed")
          assert.isFalse(
            (yield* mem.service.list("/db")).some((n) => n.endsWith(".tmp")),
            "no temp file is left after open"
          )
          yield* follow(leader.replica, follower.replica)
          assert.deepStrictEqual(yield* rawLog(follower.replica), expected)
          assert.deepStrictEqual(yield* readAll(follower.store), expectedEvents)
        }
        assert.isAtLeast(cuts, pieces.length + 6, "the cut landed in every step of the install")
        assert.deepStrictEqual([...outcomes].sort(), ["installed", "previous"])
      })
  )
})
