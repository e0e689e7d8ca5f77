/**
 * What happens to the scavenge state's rows over a run (src/state): compaction keeps them all (also across a
 * crash, and with journal frames the snapshot already holds), cleaning deletes exactly its rows, the
 * Active-stream walk pages them in name order, and the phases' session reads back, commits or rolls back
 * its changes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Disk, MemoryDisk, Prng } from "@vellum/platform"
import { Effect } from "effect"
import { openStateSession, type OriginalStreamData } from "../src/state/index.js"
import { CHUNKS, DIR, dump, fill, JOURNAL, NAMES, open, OPTIONS, original, SNAPSHOT, sp } from "./state-support.js"

describe("scavenge state: compaction", () => {
  it.effect("the journal is compacted into a snapshot and everything reopens, also after a crash", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const options = { ...OPTIONS, compactAfterBytes: 2048 }
      const s = yield* open(mem, options)
      const names: Array<string> = []
      let compactions = 0
      for (let i = 0; i < 60; i++) {
        const before = s.counts().journalBytes
        yield* s.transaction((tx) =>
          Effect.suspend(() => {
            const name = `s-${(i * 37) % 60}`
            names.push(name)
            tx.setOriginalStream(name, original(i % 3 === 0 ? "Spent" : "Active", { discardPoint: i }))
            tx.addChunkWeight(i % 5, 1)
            if (i % 10 === 9) tx.deleteChunkWeights(0, 1)
            return tx.commit({ stage: "Accumulating", sp, doneLogicalChunk: i })
          })
        )
        if (s.counts().journalBytes < before) compactions++
      }
      assert.isAbove(compactions, 3)
      assert.isTrue(mem.files().includes(SNAPSHOT))
      assert.isFalse(mem.files().some((f) => f.endsWith(".tmp")))
      const expected = yield* dump(s, names, [0, 1, 2, 3, 4])
      assert.strictEqual(expected.counts.originalStreams, 60)
      assert.deepStrictEqual(yield* dump(yield* open(mem, options), names, [0, 1, 2, 3, 4]), expected)
      mem.crash(new Prng(2), "random")
      assert.deepStrictEqual(yield* dump(yield* open(mem, options), names, [0, 1, 2, 3, 4]), expected)
    })
  )

  it.effect("journal frames already in the snapshot (compaction stopped before emptying the journal) are skipped", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const s = yield* open(mem, { ...OPTIONS, compactAfterBytes: 1 })
      yield* fill(s)
      assert.strictEqual(s.counts().journalBytes, 0)
      // fill compacted at once; put its journal frame back as if the truncation had been lost.
      const other = new MemoryDisk()
      const o = yield* open(other, { ...OPTIONS, compactAfterBytes: 1 << 30 })
      yield* fill(o)
      const frame = other.readFileSync(JOURNAL)
      const handle = yield* mem.service.open(JOURNAL)
      yield* handle.write(0, frame)
      yield* handle.sync
      yield* handle.close
      const reopened = yield* open(mem)
      assert.deepStrictEqual(yield* dump(reopened, NAMES, CHUNKS), yield* dump(s, NAMES, CHUNKS))
      assert.strictEqual(mem.readFileSync(JOURNAL).length, 0)
    })
  )
})

describe("scavenge state: cleaning deletes and the Active walk", () => {
  it.effect("deleteSpentStreams, deleteAllMetastreams and deleteChunkWeights remove exactly their rows", () =>
    Effect.gen(function* () {
      const s = yield* open(new MemoryDisk())
      yield* fill(s)
      yield* s.transaction((tx) =>
        Effect.suspend(() => {
          tx.addChunkWeight(1, 1)
          tx.addChunkWeight(2, 1)
          tx.deleteChunkWeights(1, 3)
          tx.deleteSpentStreams(false)
          return tx.commit({ stage: "Cleaning", sp })
        })
      )
      assert.deepStrictEqual(s.allChunkWeights(), [{ logicalChunk: 0, weight: 3.5 }])
      assert.deepStrictEqual(yield* Effect.forEach(NAMES, (n) => Effect.map(s.originalStream(n), (d) => d?.status)), [
        "Active",
        "Archived",
        undefined,
        undefined
      ])
      yield* s.transaction((tx) =>
        Effect.suspend(() => {
          tx.deleteSpentStreams(true)
          tx.deleteAllMetastreams()
          return tx.commit({ stage: "Done", sp })
        })
      )
      assert.deepStrictEqual(s.counts(), { ...s.counts(), originalStreams: 1, metastreams: 0, activeStreams: 1 })
    })
  )

  it.effect("activeStreams pages Active streams in ascending name order and follows status changes", () =>
    Effect.gen(function* () {
      const s = yield* open(new MemoryDisk())
      const prng = new Prng(42)
      const names = Array.from(
        { length: 200 },
        (_, i) => `${String.fromCharCode(97 + prng.int(0, 25))}${prng.int(0, 999)}-${i}`
      )
      const statusOf = (i: number): OriginalStreamData["status"] => (["Active", "Spent", "Archived"] as const)[i % 3]!
      yield* s.transaction((tx) =>
        Effect.suspend(() => {
          names.forEach((n, i) => tx.setOriginalStream(n, original(statusOf(i))))
          return tx.commit({ stage: "Accumulating", sp, doneLogicalChunk: 0 })
        })
      )
      const walk = (limit: number) =>
        Effect.gen(function* () {
          const seen: Array<string> = []
          for (
            let page = yield* s.activeStreams(undefined, limit);
            page.length > 0;
            page = yield* s.activeStreams(seen[seen.length - 1], limit)
          ) {
            assert.isAtMost(page.length, limit)
            for (const [name, data] of page) {
              assert.strictEqual(data.status, "Active")
              seen.push(name)
            }
          }
          return seen
        })
      const expected = names.filter((_, i) => statusOf(i) === "Active").sort()
      assert.deepStrictEqual(yield* walk(7), expected)
      assert.deepStrictEqual(yield* walk(1000), expected)
      assert.deepStrictEqual(
        (yield* s.activeStreams(expected[10]!, 2)).map(([n]) => n),
        expected.slice(11, 13)
      )
      // A name between two entries resumes after it, not after an entry.
      assert.deepStrictEqual(
        (yield* s.activeStreams(`${expected[4]!}~`, 1)).map(([n]) => n),
        [expected[5]]
      )
      // The calculator marks some Spent, the accumulator re-activates others.
      yield* s.transaction((tx) =>
        Effect.suspend(() => {
          names.forEach((n, i) => {
            if (i % 3 === 0 && i % 2 === 0) tx.setOriginalStream(n, original("Spent"))
            if (i % 3 === 1 && i % 4 === 1) tx.setOriginalStream(n, original("Active"))
          })
          return tx.commit({ stage: "Calculating", sp, doneStream: undefined })
        })
      )
      const now = (yield* Effect.filter(names, (n) =>
        Effect.map(s.originalStream(n), (d) => d?.status === "Active")
      )).sort()
      assert.notDeepEqual(now, expected)
      assert.deepStrictEqual(yield* walk(5), now)
      assert.strictEqual(s.counts().activeStreams, now.length)
    })
  )
})

describe("scavenge state: the phases' session", () => {
  it.effect("changes since the last commit are read back, committed with the checkpoint, or rolled back", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const session = yield* Effect.provideService(openStateSession(DIR, OPTIONS), Disk, mem.service)
      session.setOriginalStream("x", original("Active"))
      session.setMetastream("$$y", { isTombstoned: false, discardPoint: 2 })
      session.addChunkWeight(1, 2)
      session.addChunkWeight(2, 0)
      assert.strictEqual(session.chunkWeight(1), 2)
      assert.strictEqual(session.chunkWeight(5), 0)
      assert.deepStrictEqual(session.weightedChunks(), [{ chunk: 1, weight: 2 }])
      const withData: Array<string> = []
      yield* session.streamsWithData((name) => withData.push(name))
      assert.deepStrictEqual(withData, ["$$y", "x"])
      assert.deepStrictEqual(yield* session.activeStreams(undefined, 10), [])
      yield* session.commit({ stage: "Accumulating", sp, doneLogicalChunk: 0 })
      assert.deepStrictEqual(yield* session.activeStreams(undefined, 10), ["x"])
      session.addChunkWeight(1, 5)
      session.deleteAllMetastreams()
      session.rollback()
      assert.strictEqual(session.chunkWeight(1), 2)
      assert.deepStrictEqual(yield* session.metastream("$$y"), { isTombstoned: false, discardPoint: 2 })
      session.addChunkWeight(3, 1)
      yield* session.close
      const reopened = yield* open(mem)
      assert.deepStrictEqual(reopened.checkpoint(), { stage: "Accumulating", sp, doneLogicalChunk: 0 })
      assert.deepStrictEqual(reopened.allChunkWeights(), [
        { logicalChunk: 1, weight: 2 },
        { logicalChunk: 2, weight: 0 }
      ])
    })
  )
})
