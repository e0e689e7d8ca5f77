/**
 * The persisted scavenge state (src/state): values round-trip through the journal and the snapshot, a
 * commit is one write + one sync and survives power loss, an uncommitted transaction leaves no trace, a
 * torn journal tail is cut, damage inside the journal is refused, compaction keeps everything, and the
 * Active-stream walk pages in name order.
 */
import { assert, describe, it } from "@effect/vitest"
import { Disk, MemoryDisk, Prng, type DiskError } from "@vellum/platform"
import { Effect, Exit } from "effect"
import {
  openScavengeState, openStateSession, type Checkpoint, type OriginalStreamData, type ScavengeState, type ScavengeStateOptions, type StateCorrupt
} from "../src/state/index.js"

const DIR = "/db/index/scavenging"
const JOURNAL = `${DIR}/scavenge-state.journal`
const SNAPSHOT = `${DIR}/scavenge-state.snapshot`
const OPTIONS: ScavengeStateOptions = { pageSize: 512, cacheBytes: 1 << 20 }
const sp = { position: 4096, number: 3, effectiveNowMicros: 1_700_000_000_000_000, threshold: -1 }
// long.MaxValue as JS holds it (the nearest double, 2^63).
const LONG_MAX = 2 ** 63

const open = (mem: MemoryDisk, options: ScavengeStateOptions = OPTIONS): Effect.Effect<ScavengeState, DiskError | StateCorrupt> =>
  Effect.provideService(openScavengeState(DIR, options), Disk, mem.service)

const original = (status: OriginalStreamData["status"], overrides: Partial<OriginalStreamData> = {}): OriginalStreamData => ({
  isTombstoned: false, maxAgeSeconds: undefined, maxCount: undefined, truncateBefore: undefined,
  discardPoint: 0, maybeDiscardPoint: 0, status, ...overrides
})

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

/** Everything observable about the state, for deep comparison. */
const dump = (s: ScavengeState, names: ReadonlyArray<string>, chunks: ReadonlyArray<number>) => ({
  checkpoint: s.checkpoint(),
  originals: names.map((n) => [n, s.originalStream(n)]),
  metastreams: names.map((n) => [n, s.metastream(`$$${n}`)]),
  weights: s.allChunkWeights(),
  ranges: chunks.map((c) => [c, s.chunkTimeRange(c)]),
  active: s.activeStreams(undefined, 1_000_000).map(([n]) => n),
  counts: { ...s.counts(), journalBytes: 0, snapshotBytes: 0 }
})

const fill = (s: ScavengeState, checkpoint: Checkpoint = { stage: "Calculating", sp, doneStream: "b" }) =>
  s.transaction((tx) =>
    Effect.suspend(() => {
      tx.setOriginalStream("a", original("Active", { maxAgeSeconds: 60, maxCount: 3, truncateBefore: LONG_MAX, discardPoint: 2, maybeDiscardPoint: 5 }))
      tx.setOriginalStream("b", original("Archived", { isTombstoned: true, discardPoint: LONG_MAX }))
      tx.setOriginalStream("c", original("Spent", { truncateBefore: 0 }))
      tx.setMetastream("$$a", { isTombstoned: false, discardPoint: 4 })
      tx.setMetastream("$$b", { isTombstoned: true, discardPoint: 0 })
      tx.addChunkWeight(0, 2)
      tx.addChunkWeight(0, 1.5)
      tx.addChunkWeight(3, 0)
      tx.setChunkTimeRange(1, { minMicros: -1, maxMicros: 1_700_000_000_123_456 })
      return tx.commit(checkpoint)
    }))

const NAMES = ["a", "b", "c", "d"]
const CHUNKS = [0, 1, 2, 3]

describe("scavenge state: values and durability", () => {
  it.effect("every value kind and checkpoint round-trips through a clean reopen and a strict crash", () =>
    Effect.gen(function*() {
      for (const [i, checkpoint] of CHECKPOINTS.entries()) {
        const mem = new MemoryDisk()
        const s = yield* open(mem)
        assert.strictEqual(s.checkpoint(), undefined)
        yield* fill(s, checkpoint)
        const before = dump(s, NAMES, CHUNKS)
        assert.deepStrictEqual(before.checkpoint, checkpoint)
        assert.deepStrictEqual(before.weights, [{ logicalChunk: 0, weight: 3.5 }, { logicalChunk: 3, weight: 0 }])
        assert.strictEqual(s.originalStream("a")!.truncateBefore, LONG_MAX)
        if (i % 2 === 0) yield* s.close
        else mem.crash(new Prng(i), "strict")
        assert.deepStrictEqual(dump(yield* open(mem), NAMES, CHUNKS), before)
      }
    }))

  it.effect("a commit is one write and one sync, and survives a strict crash", () =>
    Effect.gen(function*() {
      const mem = new MemoryDisk()
      const options = { ...OPTIONS, compactAfterBytes: 1 << 30 }
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
        }))
      assert.strictEqual(mem.stats.writes - writes, 1)
      assert.strictEqual(mem.stats.syncs - syncs, 1)
      mem.crash(new Prng(1), "strict")
      const after = yield* open(mem, options)
      assert.strictEqual(after.counts().originalStreams, 5000)
      assert.strictEqual(after.chunkWeight(6), 714)
    }))

  it.effect("a transaction sees its own writes; others see only committed data", () =>
    Effect.gen(function*() {
      const s = yield* open(new MemoryDisk())
      yield* fill(s)
      yield* s.transaction((tx) =>
        Effect.gen(function*() {
          tx.addChunkWeight(0, 1)
          tx.setMetastream("$$new", { isTombstoned: false, discardPoint: 1 })
          assert.strictEqual(tx.chunkWeight(0), 4.5)
          assert.strictEqual(s.chunkWeight(0), 3.5)
          assert.strictEqual(s.metastream("$$new"), undefined)
          tx.deleteAllMetastreams()
          assert.strictEqual(tx.metastream("$$a"), undefined)
          tx.setMetastream("$$z", { isTombstoned: true, discardPoint: 9 })
          assert.deepStrictEqual(tx.metastream("$$z"), { isTombstoned: true, discardPoint: 9 })
          yield* tx.commit({ stage: "Cleaning", sp })
        }))
      assert.strictEqual(s.chunkWeight(0), 4.5)
      assert.strictEqual(s.metastream("$$a"), undefined)
      assert.strictEqual(s.metastream("$$new"), undefined)
      assert.strictEqual(s.counts().metastreams, 1)
    }))

  it.effect("a failed, stopped or uncommitted transaction changes nothing, in memory or on disk", () =>
    Effect.gen(function*() {
      const mem = new MemoryDisk()
      const s = yield* open(mem)
      yield* fill(s)
      const before = dump(s, NAMES, CHUNKS)
      const touch = (tx: Parameters<Parameters<ScavengeState["transaction"]>[0]>[0]) => {
        tx.setOriginalStream("d", original("Active"))
        tx.addChunkWeight(0, 100)
        tx.deleteSpentStreams(true)
      }
      const failed = yield* Effect.exit(s.transaction((tx) => Effect.zipRight(Effect.sync(() => touch(tx)), Effect.fail("boom"))))
      assert.isTrue(Exit.isFailure(failed))
      yield* s.transaction((tx) => Effect.sync(() => touch(tx)))
      const stopped = yield* Effect.exit(s.transaction((tx) => Effect.zipRight(Effect.sync(() => touch(tx)), Effect.interrupt)))
      assert.isTrue(Exit.isInterrupted(stopped))
      assert.deepStrictEqual(dump(s, NAMES, CHUNKS), before)
      // Power loss in the middle of a transaction: nothing of it was written.
      const crashed = yield* Effect.exit(s.transaction((tx) =>
        Effect.gen(function*() {
          touch(tx)
          mem.crash(new Prng(7), "random")
          yield* tx.commit({ stage: "Done", sp })
        })))
      assert.isTrue(Exit.isFailure(crashed))
      assert.deepStrictEqual(dump(yield* open(mem), NAMES, CHUNKS), before)
    }))

  it.effect("after a failed sync the state refuses further transactions (fail-stop) and reopens to the last commit", () =>
    Effect.gen(function*() {
      const mem = new MemoryDisk()
      const s = yield* open(mem)
      yield* fill(s)
      const before = dump(s, NAMES, CHUNKS)
      mem.setFaults({ syncError: 1 })
      const exit = yield* Effect.exit(s.transaction((tx) => Effect.suspend(() => {
        tx.addChunkWeight(9, 2)
        return tx.commit({ stage: "Done", sp })
      })))
      mem.setFaults(undefined)
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(s.chunkWeight(9), undefined)
      const again = yield* Effect.exit(s.transaction((tx) => tx.commit({ stage: "Done", sp })))
      assert.isTrue(Exit.isFailure(again))
      mem.crash(new Prng(3), "strict")
      assert.deepStrictEqual(dump(yield* open(mem), NAMES, CHUNKS), before)
    }))
})

describe("scavenge state: journal recovery", () => {
  /** Two commits; returns where the first frame ends and the state after the first. */
  const twoCommits = (mem: MemoryDisk) =>
    Effect.gen(function*() {
      const s = yield* open(mem)
      yield* fill(s)
      const firstEnd = s.counts().journalBytes
      const first = dump(s, NAMES, CHUNKS)
      yield* s.transaction((tx) => Effect.suspend(() => {
        tx.setOriginalStream("d", original("Active", { maxCount: 1 }))
        tx.addChunkWeight(2, 2)
        return tx.commit({ stage: "Done", sp })
      }))
      yield* s.close
      return { firstEnd, first }
    })

  const withJournal = (mem: MemoryDisk, edit: (bytes: Buffer) => Buffer) =>
    Effect.gen(function*() {
      const bytes = edit(mem.readFileSync(JOURNAL))
      const handle = yield* mem.service.open(JOURNAL)
      yield* handle.truncate(0)
      yield* handle.write(0, bytes)
      yield* handle.sync
      yield* handle.close
    })

  it.effect("a torn last frame (partial, or a zero-filled tail) is cut off and later commits follow the cut", () =>
    Effect.gen(function*() {
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
        assert.deepStrictEqual(dump(s, NAMES, CHUNKS), first, tear)
        assert.strictEqual(mem.readFileSync(JOURNAL).length, firstEnd)
        yield* s.transaction((tx) => Effect.suspend(() => {
          tx.setChunkTimeRange(2, { minMicros: 5, maxMicros: 6 })
          return tx.commit({ stage: "ExecutingChunks", sp, doneLogicalChunk: 2 })
        }))
        mem.crash(new Prng(11), "strict")
        const reopened = yield* open(mem)
        assert.deepStrictEqual(reopened.chunkTimeRange(2), { minMicros: 5, maxMicros: 6 })
        assert.deepStrictEqual(reopened.checkpoint(), { stage: "ExecutingChunks", sp, doneLogicalChunk: 2 })
        assert.strictEqual(reopened.originalStream("d"), undefined)
      }
    }))

  it.effect("damage before a valid frame is refused as StateCorrupt, not silently cut", () =>
    Effect.gen(function*() {
      const mem = new MemoryDisk()
      yield* twoCommits(mem)
      yield* withJournal(mem, (b) => {
        const copy = Buffer.from(b)
        copy[40] ^= 0x10
        return copy
      })
      const error = yield* Effect.flip(open(mem))
      assert.strictEqual(error._tag, "StateCorrupt")
    }))

  it.effect("a bit flipped by a read (not on disk) is read again rather than taken for a torn tail", () =>
    Effect.gen(function*() {
      const mem = new MemoryDisk({ prng: new Prng(5) })
      yield* twoCommits(mem)
      const expected = dump(yield* open(mem), NAMES, CHUNKS)
      mem.setFaults({ bitFlipOnRead: 0.5 })
      let reopened = 0
      for (let i = 0; i < 20; i++) {
        const exit = yield* Effect.exit(open(mem))
        // Reads that keep disagreeing may make the open fail (IOError); it must never drop a commit.
        if (Exit.isSuccess(exit)) {
          reopened++
          assert.deepStrictEqual(dump(exit.value, NAMES, CHUNKS), expected)
          yield* exit.value.close
        }
      }
      mem.setFaults(undefined)
      assert.isAbove(reopened, 5)
    }))
})

describe("scavenge state: compaction", () => {
  it.effect("the journal is compacted into a snapshot and everything reopens, also after a crash", () =>
    Effect.gen(function*() {
      const mem = new MemoryDisk()
      const options = { ...OPTIONS, compactAfterBytes: 2048 }
      const s = yield* open(mem, options)
      const names: Array<string> = []
      let compactions = 0
      for (let i = 0; i < 60; i++) {
        const before = s.counts().journalBytes
        yield* s.transaction((tx) => Effect.suspend(() => {
          const name = `s-${(i * 37) % 60}`
          names.push(name)
          tx.setOriginalStream(name, original(i % 3 === 0 ? "Spent" : "Active", { discardPoint: i }))
          tx.addChunkWeight(i % 5, 1)
          if (i % 10 === 9) tx.deleteChunkWeights(0, 1)
          return tx.commit({ stage: "Accumulating", sp, doneLogicalChunk: i })
        }))
        if (s.counts().journalBytes < before) compactions++
      }
      assert.isAbove(compactions, 3)
      assert.isTrue(mem.files().includes(SNAPSHOT))
      assert.isFalse(mem.files().some((f) => f.endsWith(".tmp")))
      const expected = dump(s, names, [0, 1, 2, 3, 4])
      assert.strictEqual(expected.counts.originalStreams, 60)
      assert.deepStrictEqual(dump(yield* open(mem, options), names, [0, 1, 2, 3, 4]), expected)
      mem.crash(new Prng(2), "random")
      assert.deepStrictEqual(dump(yield* open(mem, options), names, [0, 1, 2, 3, 4]), expected)
    }))

  it.effect("journal frames already in the snapshot (compaction stopped before emptying the journal) are skipped", () =>
    Effect.gen(function*() {
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
      assert.deepStrictEqual(dump(reopened, NAMES, CHUNKS), dump(s, NAMES, CHUNKS))
      assert.strictEqual(mem.readFileSync(JOURNAL).length, 0)
    }))
})

describe("scavenge state: cleaning deletes and the Active walk", () => {
  it.effect("deleteSpentStreams, deleteAllMetastreams and deleteChunkWeights remove exactly their rows", () =>
    Effect.gen(function*() {
      const s = yield* open(new MemoryDisk())
      yield* fill(s)
      yield* s.transaction((tx) => Effect.suspend(() => {
        tx.addChunkWeight(1, 1)
        tx.addChunkWeight(2, 1)
        tx.deleteChunkWeights(1, 3)
        tx.deleteSpentStreams(false)
        return tx.commit({ stage: "Cleaning", sp })
      }))
      assert.deepStrictEqual(s.allChunkWeights(), [{ logicalChunk: 0, weight: 3.5 }])
      assert.deepStrictEqual(NAMES.map((n) => s.originalStream(n)?.status), ["Active", "Archived", undefined, undefined])
      yield* s.transaction((tx) => Effect.suspend(() => {
        tx.deleteSpentStreams(true)
        tx.deleteAllMetastreams()
        return tx.commit({ stage: "Done", sp })
      }))
      assert.deepStrictEqual(s.counts(), { ...s.counts(), originalStreams: 1, metastreams: 0, activeStreams: 1 })
    }))

  it.effect("activeStreams pages Active streams in ascending name order and follows status changes", () =>
    Effect.gen(function*() {
      const s = yield* open(new MemoryDisk())
      const prng = new Prng(42)
      const names = Array.from({ length: 200 }, (_, i) => `${String.fromCharCode(97 + prng.int(0, 25))}${prng.int(0, 999)}-${i}`)
      const statusOf = (i: number): OriginalStreamData["status"] => (["Active", "Spent", "Archived"] as const)[i % 3]!
      yield* s.transaction((tx) => Effect.suspend(() => {
        names.forEach((n, i) => tx.setOriginalStream(n, original(statusOf(i))))
        return tx.commit({ stage: "Accumulating", sp, doneLogicalChunk: 0 })
      }))
      const walk = (limit: number) => {
        const seen: Array<string> = []
        for (let page = s.activeStreams(undefined, limit); page.length > 0; page = s.activeStreams(seen[seen.length - 1], limit)) {
          assert.isAtMost(page.length, limit)
          for (const [name, data] of page) {
            assert.strictEqual(data.status, "Active")
            seen.push(name)
          }
        }
        return seen
      }
      const expected = names.filter((_, i) => statusOf(i) === "Active").sort()
      assert.deepStrictEqual(walk(7), expected)
      assert.deepStrictEqual(walk(1000), expected)
      assert.deepStrictEqual(s.activeStreams(expected[10]!, 2).map(([n]) => n), expected.slice(11, 13))
      // A name between two entries resumes after it, not after an entry.
      assert.deepStrictEqual(s.activeStreams(`${expected[4]!}~`, 1).map(([n]) => n), [expected[5]])
      // The calculator marks some Spent, the accumulator re-activates others.
      yield* s.transaction((tx) => Effect.suspend(() => {
        names.forEach((n, i) => {
          if (i % 3 === 0 && i % 2 === 0) tx.setOriginalStream(n, original("Spent"))
          if (i % 3 === 1 && i % 4 === 1) tx.setOriginalStream(n, original("Active"))
        })
        return tx.commit({ stage: "Calculating", sp, doneStream: undefined })
      }))
      const now = names.filter((n) => s.originalStream(n)?.status === "Active").sort()
      assert.notDeepEqual(now, expected)
      assert.deepStrictEqual(walk(5), now)
      assert.strictEqual(s.counts().activeStreams, now.length)
    }))
})

describe("scavenge state: the phases' session", () => {
  it.effect("changes since the last commit are read back, committed with the checkpoint, or rolled back", () =>
    Effect.gen(function*() {
      const mem = new MemoryDisk()
      const session = yield* Effect.provideService(openStateSession(DIR, OPTIONS), Disk, mem.service)
      session.setOriginalStream("x", original("Active"))
      session.setMetastream("$$y", { isTombstoned: false, discardPoint: 2 })
      session.addChunkWeight(1, 2)
      session.addChunkWeight(2, 0)
      assert.strictEqual(session.chunkWeight(1), 2)
      assert.strictEqual(session.chunkWeight(5), 0)
      assert.deepStrictEqual(session.weightedChunks(), [{ chunk: 1, weight: 2 }])
      assert.deepStrictEqual([...session.streamsWithData()].sort(), ["$$y", "x"])
      assert.deepStrictEqual(session.activeStreams(undefined, 10), [])
      yield* session.commit({ stage: "Accumulating", sp, doneLogicalChunk: 0 })
      assert.deepStrictEqual(session.activeStreams(undefined, 10), ["x"])
      session.addChunkWeight(1, 5)
      session.deleteAllMetastreams()
      session.rollback()
      assert.strictEqual(session.chunkWeight(1), 2)
      assert.deepStrictEqual(session.metastream("$$y"), { isTombstoned: false, discardPoint: 2 })
      session.addChunkWeight(3, 1)
      yield* session.close
      const reopened = yield* open(mem)
      assert.deepStrictEqual(reopened.checkpoint(), { stage: "Accumulating", sp, doneLogicalChunk: 0 })
      assert.deepStrictEqual(reopened.allChunkWeights(), [{ logicalChunk: 1, weight: 2 }, { logicalChunk: 2, weight: 0 }])
    }))
})
