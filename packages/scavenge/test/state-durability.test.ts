/**
 * The persisted scavenge state's durability (src/state): values round-trip through the journal, a commit is
 * one write + one sync and survives power loss, an uncommitted or failed transaction leaves no trace, a
 * failed sync stops all later transactions, a torn journal tail is cut and damage inside it is refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { MemoryDisk, Prng } from "@vellum/platform"
import { Effect, Exit } from "effect"
import type { Checkpoint, ScavengeState } from "../src/state/index.js"
import { CHUNKS, dump, fill, JOURNAL, LONG_MAX, NAMES, open, OPTIONS, original, sp } from "./state-support.js"

const CHECKPOINTS: ReadonlyArray<Checkpoint> = [
  { stage: "Accumulating", sp, doneLogicalChunk: undefined },
  { stage: "Accumulating", sp, doneLogicalChunk: 7 },
  { stage: "Calculating", sp, doneStream: undefined },
  { stage: "Calculating", sp, doneStream: "ünï-cödé/stream" },
  { stage: "ExecutingChunks", sp, doneLogicalChunk: 0 },
  { stage: "MergingChunks", sp },
  { stage: "ExecutingIndex", sp },
  { stage: "Cleaning", sp },
  { stage: "Done", sp: { position: 0, number: 0, effectiveNowMicros: -5, threshold: 2.5 } }
]

describe("scavenge state: values and durability", () => {
  it.effect("every value kind and checkpoint round-trips through a clean reopen and a strict crash", () =>
    Effect.gen(function* () {
      for (const [i, checkpoint] of CHECKPOINTS.entries()) {
        const mem = new MemoryDisk()
        const s = yield* open(mem)
        assert.strictEqual(s.checkpoint(), undefined)
        yield* fill(s, checkpoint)
        const before = yield* dump(s, NAMES, CHUNKS)
        assert.deepStrictEqual(before.checkpoint, checkpoint)
        assert.deepStrictEqual(before.weights, [
          { logicalChunk: 0, weight: 3.5 },
          { logicalChunk: 3, weight: 0 }
        ])
        assert.strictEqual((yield* s.originalStream("a"))!.truncateBefore, LONG_MAX)
        if (i % 2 === 0) yield* s.close
        else mem.crash(new Prng(i), "strict")
        assert.deepStrictEqual(yield* dump(yield* open(mem), NAMES, CHUNKS), before)
      }
    })
  )

  it.effect("a commit is one write and one sync, and survives a strict crash", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      // A cache large enough that the delta of 5000 rows does not trigger a compaction.
      const options = { ...OPTIONS, cacheBytes: 64 << 20, compactAfterBytes: 1 << 30 }
      const s = yield* open(mem, options)
      const writes = mem.stats.writes
      const syncs = mem.stats.syncs
      yield* s.transaction((tx) =>
        Effect.suspend(() => {
          for (let i = 0; i < 5000; i++) {
            tx.setOriginalStream(`stream-${i}`, original("Active"))
            tx.addChunkWeight(i % 7, 1)
          }
          return tx.commit({ stage: "Calculating", sp, doneStream: "stream-4999" })
        })
      )
      assert.strictEqual(mem.stats.writes - writes, 1)
      assert.strictEqual(mem.stats.syncs - syncs, 1)
      mem.crash(new Prng(1), "strict")
      const after = yield* open(mem, options)
      assert.strictEqual(after.counts().originalStreams, 5000)
      assert.strictEqual(after.chunkWeight(6), 714)
    })
  )

  it.effect("a transaction sees its own writes; others see only committed data", () =>
    Effect.gen(function* () {
      const s = yield* open(new MemoryDisk())
      yield* fill(s)
      yield* s.transaction((tx) =>
        Effect.gen(function* () {
          tx.addChunkWeight(0, 1)
          tx.setMetastream("$$new", { isTombstoned: false, discardPoint: 1 })
          assert.strictEqual(tx.chunkWeight(0), 4.5)
          assert.strictEqual(s.chunkWeight(0), 3.5)
          assert.strictEqual(yield* s.metastream("$$new"), undefined)
          tx.deleteAllMetastreams()
          assert.strictEqual(yield* tx.metastream("$$a"), undefined)
          tx.setMetastream("$$z", { isTombstoned: true, discardPoint: 9 })
          assert.deepStrictEqual(yield* tx.metastream("$$z"), { isTombstoned: true, discardPoint: 9 })
          yield* tx.commit({ stage: "Cleaning", sp })
        })
      )
      assert.strictEqual(s.chunkWeight(0), 4.5)
      assert.strictEqual(yield* s.metastream("$$a"), undefined)
      assert.strictEqual(yield* s.metastream("$$new"), undefined)
      assert.strictEqual(s.counts().metastreams, 1)
    })
  )

  it.effect("a failed, stopped or uncommitted transaction changes nothing, in memory or on disk", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const s = yield* open(mem)
      yield* fill(s)
      const before = yield* dump(s, NAMES, CHUNKS)
      const touch = (tx: Parameters<Parameters<ScavengeState["transaction"]>[0]>[0]) => {
        tx.setOriginalStream("d", original("Active"))
        tx.addChunkWeight(0, 100)
        tx.deleteSpentStreams(true)
      }
      const failed = yield* Effect.exit(
        s.transaction((tx) =>
          Effect.zipRight(
            Effect.sync(() => touch(tx)),
            Effect.fail("boom")
          )
        )
      )
      assert.isTrue(Exit.isFailure(failed))
      yield* s.transaction((tx) => Effect.sync(() => touch(tx)))
      const stopped = yield* Effect.exit(
        s.transaction((tx) =>
          Effect.zipRight(
            Effect.sync(() => touch(tx)),
            Effect.interrupt
          )
        )
      )
      assert.isTrue(Exit.isInterrupted(stopped))
      assert.deepStrictEqual(yield* dump(s, NAMES, CHUNKS), before)
      // Power loss in the middle of a transaction: nothing of it was written.
      const crashed = yield* Effect.exit(
        s.transaction((tx) =>
          Effect.gen(function* () {
            touch(tx)
            mem.crash(new Prng(7), "random")
            yield* tx.commit({ stage: "Done", sp })
          })
        )
      )
      assert.isTrue(Exit.isFailure(crashed))
      assert.deepStrictEqual(yield* dump(yield* open(mem), NAMES, CHUNKS), before)
    })
  )

  it.effect(
    "after a failed sync the state refuses further transactions (fail-stop) and reopens to the last commit",
    () =>
      Effect.gen(function* () {
        const mem = new MemoryDisk()
        const s = yield* open(mem)
        yield* fill(s)
        const before = yield* dump(s, NAMES, CHUNKS)
        mem.setFaults({ syncError: 1 })
        const exit = yield* Effect.exit(
          s.transaction((tx) =>
            Effect.suspend(() => {
              tx.addChunkWeight(9, 2)
              return tx.commit({ stage: "Done", sp })
            })
          )
        )
        mem.setFaults(undefined)
        assert.isTrue(Exit.isFailure(exit))
        assert.strictEqual(s.chunkWeight(9), undefined)
        const again = yield* Effect.exit(s.transaction((tx) => tx.commit({ stage: "Done", sp })))
        assert.isTrue(Exit.isFailure(again))
        mem.crash(new Prng(3), "strict")
        assert.deepStrictEqual(yield* dump(yield* open(mem), NAMES, CHUNKS), before)
      })
  )
})

describe("scavenge state: journal recovery", () => {
  /** Two commits; returns where the first frame ends and the state after the first. */
  const twoCommits = (mem: MemoryDisk) =>
    Effect.gen(function* () {
      const s = yield* open(mem)
      yield* fill(s)
      const firstEnd = s.counts().journalBytes
      const first = yield* dump(s, NAMES, CHUNKS)
      yield* s.transaction((tx) =>
        Effect.suspend(() => {
          tx.setOriginalStream("d", original("Active", { maxCount: 1 }))
          tx.addChunkWeight(2, 2)
          return tx.commit({ stage: "Done", sp })
        })
      )
      yield* s.close
      return { firstEnd, first }
    })

  const withJournal = (mem: MemoryDisk, edit: (bytes: Buffer) => Buffer) =>
    Effect.gen(function* () {
      const bytes = edit(mem.readFileSync(JOURNAL))
      const handle = yield* mem.service.open(JOURNAL)
      yield* handle.truncate(0)
      yield* handle.write(0, bytes)
      yield* handle.sync
      yield* handle.close
    })

  it.effect("a torn last frame (partial, or a zero-filled tail) is cut off and later commits follow the cut", () =>
    Effect.gen(function* () {
      for (const tear of ["partial", "zeros", "header"] as const) {
        const mem = new MemoryDisk()
        const { firstEnd, first } = yield* twoCommits(mem)
        yield* withJournal(mem, (b) => {
          if (tear === "partial") return b.subarray(0, firstEnd + 100)
          if (tear === "header") return b.subarray(0, firstEnd + 10)
          const copy = Buffer.from(b)
          copy.fill(0, firstEnd)
          return copy
        })
        const s = yield* open(mem)
        assert.deepStrictEqual(yield* dump(s, NAMES, CHUNKS), first, tear)
        assert.strictEqual(mem.readFileSync(JOURNAL).length, firstEnd)
        yield* s.transaction((tx) =>
          Effect.suspend(() => {
            tx.setChunkTimeRange(2, { minMicros: 5, maxMicros: 6 })
            return tx.commit({ stage: "ExecutingChunks", sp, doneLogicalChunk: 2 })
          })
        )
        mem.crash(new Prng(11), "strict")
        const reopened = yield* open(mem)
        assert.deepStrictEqual(reopened.chunkTimeRange(2), { minMicros: 5, maxMicros: 6 })
        assert.deepStrictEqual(reopened.checkpoint(), { stage: "ExecutingChunks", sp, doneLogicalChunk: 2 })
        assert.strictEqual(yield* reopened.originalStream("d"), undefined)
      }
    })
  )

  it.effect("damage before a valid frame is refused as StateCorrupt, not silently cut", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      yield* twoCommits(mem)
      yield* withJournal(mem, (b) => {
        const copy = Buffer.from(b)
        copy[40] ^= 0x10
        return copy
      })
      const error = yield* Effect.flip(open(mem))
      assert.strictEqual(error._tag, "StateCorrupt")
    })
  )

  it.effect("a bit flipped by a read (not on disk) is read again rather than taken for a torn tail", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk({ prng: new Prng(5) })
      yield* twoCommits(mem)
      const expected = yield* dump(yield* open(mem), NAMES, CHUNKS)
      mem.setFaults({ bitFlipOnRead: 0.5 })
      let reopened = 0
      for (let i = 0; i < 20; i++) {
        const exit = yield* Effect.exit(open(mem))
        // Reads that keep disagreeing may make the open fail (IOError); it must never drop a commit.
        if (Exit.isSuccess(exit)) {
          reopened++
          assert.deepStrictEqual(yield* dump(exit.value, NAMES, CHUNKS), expected)
          yield* exit.value.close
        }
      }
      mem.setFaults(undefined)
      assert.isAbove(reopened, 5)
    })
  )
})
