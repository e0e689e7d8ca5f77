import { assert, describe, it } from "@effect/vitest"
import { Data, Deferred, Effect, Fiber, Layer, Option, TestClock } from "effect"
import * as fc from "fast-check"
import { Disk, gateDisk, type DiskService, MemoryDisk } from "@vellum/platform"
import type { NewIndexEntry } from "../src/tableindex/Entry.js"
import type { TableScavenged } from "../src/tableindex/Scavenge.js"
import { type HashFn, streamHash64, weakHash } from "../src/tableindex/StreamHash.js"
import { open, type TableIndex, type TableIndexConfig } from "../src/tableindex/TableIndex.js"

// Entry k of the workload: stream STREAMS[k % 5], event number ⌊k / 5⌋, position 10k, added alone in a
// batch ending at 10k + 1. With single-entry batches a memtable of M entries rotates after exactly M, so
// the tables hold entries 0 .. ⌊n/M⌋·M − 1 and table j (without merges) holds jM .. (j+1)M − 1.
const STREAMS = ["alpha", "beta", "gamma", "delta", "$$alpha"]
const DIR = "/db/index"
const entry = (k: number): NewIndexEntry => ({
  stream: STREAMS[k % STREAMS.length]!,
  eventNumber: Math.floor(k / STREAMS.length),
  position: k * 10
})
const kOf = (position: number) => position / 10

const addEntries = (index: TableIndex, from: number, to: number) => {
  for (let k = from; k < to; k++) index.addBatch([entry(k)], k * 10 + 1)
}

/** Checks range and latest of every stream: exactly the entries `live` holds (hash collisions allowed). */
const expectEntries = (index: TableIndex, live: ReadonlySet<number>) =>
  Effect.gen(function* () {
    for (const stream of STREAMS) {
      const want = [...live].filter((k) => entry(k).stream === stream).sort((a, b) => a - b)
      const got = yield* index.range(stream, 0, Number.MAX_SAFE_INTEGER)
      for (const e of got)
        assert.isTrue(live.has(kOf(e.position)), `${stream}: entry ${kOf(e.position)} should be gone`)
      const mine = got.filter((e) => entry(kOf(e.position)).stream === stream).map((e) => kOf(e.position))
      assert.deepStrictEqual(mine, want, `range of ${stream}`)
      for (const limit of [1, 2, 1000]) {
        const got = yield* index.latest(stream, limit)
        const top = got.filter((e) => entry(kOf(e.position)).stream === stream).map((e) => kOf(e.position))
        assert.deepStrictEqual(top, [...want].reverse().slice(0, top.length), `latest ${limit} of ${stream}`)
        if (got.length < limit) assert.strictEqual(top.length, want.length)
      }
    }
  })

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)
const dropEveryThird = (_hi: number, _lo: number, _en: number, position: number) => kOf(position) % 3 !== 0
const tableFiles = (disk: MemoryDisk) =>
  disk
    .files()
    .filter((f) => f.endsWith(".vtable"))
    .sort()
const sizeOf = (disk: MemoryDisk, path: string) => disk.readFileSync(path).length

/** Runs `f` on an index opened on `disk` in its own scope. */
const withIndex = <A, E>(
  service: DiskService,
  config: TableIndexConfig,
  f: (index: TableIndex) => Effect.Effect<A, E>
) => Effect.scoped(Effect.flatMap(open(config), f)).pipe(Effect.provide(Layer.succeed(Disk, service)))

const collect = () => {
  const reports: Array<TableScavenged> = []
  return { reports, onTable: (t: TableScavenged) => Effect.sync(() => void reports.push(t)) }
}

describe("TableIndex.scavenge", () => {
  it.effect("keep-all leaves every table as it is and reports each with nothing deleted", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      yield* withIndex(disk.service, { dir: DIR, memtableMaxEntries: 4, maxAutoMergeLevel: 1 }, (index) =>
        Effect.gen(function* () {
          addEntries(index, 0, 26)
          yield* index.awaitIdle
          assert.deepStrictEqual(index.stats().levels, [0, 3])
          const before = tableFiles(disk).map((f) => [f, sizeOf(disk, f)])
          const { reports, onTable } = collect()
          let calls = 0
          yield* index.scavenge(() => (calls++, true), onTable)
          assert.strictEqual(calls, 24, "keep runs once per table entry, never on memtable entries")
          assert.deepStrictEqual(
            tableFiles(disk).map((f) => [f, sizeOf(disk, f)]),
            before
          )
          assert.deepStrictEqual(
            reports.map((r) => [r.level, r.index, r.entriesKept, r.entriesDeleted, r.spaceSaved]),
            range(0, 3).map((i) => [1, i, 8, 0, 0])
          )
          yield* expectEntries(index, new Set(range(0, 26)))
        })
      )
    })
  )

  it.effect("keep-nothing removes every table; memtable entries stay", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      yield* withIndex(disk.service, { dir: DIR, memtableMaxEntries: 5 }, (index) =>
        Effect.gen(function* () {
          addEntries(index, 0, 23)
          yield* index.awaitIdle
          assert.deepStrictEqual(index.stats().levels, [0, 0, 1])
          const sizes = tableFiles(disk).map((f) => sizeOf(disk, f))
          const { reports, onTable } = collect()
          yield* index.scavenge(() => false, onTable)
          assert.deepStrictEqual(
            reports.map((r) => [r.level, r.index, r.entriesKept, r.entriesDeleted, r.spaceSaved]),
            [[2, 0, 0, 20, sizes[0]]]
          )
          assert.deepStrictEqual(tableFiles(disk), [])
          assert.strictEqual(index.stats().tables, 0)
          yield* expectEntries(index, new Set([20, 21, 22]))
          addEntries(index, 23, 40)
          yield* index.flush
          yield* expectEntries(index, new Set(range(20, 40)))
        })
      )
      // The manifest lists no scavenged-away table.
      yield* withIndex(disk.service, { dir: DIR, verifyOnOpen: true }, (index) =>
        Effect.gen(function* () {
          assert.strictEqual(index.persistedPosition, 391)
          yield* expectEntries(index, new Set(range(20, 40)))
        })
      )
    })
  )

  it.effect("keep a subset: reads return exactly the kept entries; onTable figures match the files", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      const config: TableIndexConfig = {
        dir: DIR,
        memtableMaxEntries: 4,
        autoMerge: false,
        entriesPerBlock: 2,
        ioChunkBytes: 24 * 3
      }
      yield* withIndex(disk.service, config, (index) =>
        Effect.gen(function* () {
          addEntries(index, 0, 15)
          yield* index.awaitIdle
          const before = new Map(tableFiles(disk).map((f) => [f, sizeOf(disk, f)]))
          assert.strictEqual(before.size, 3)
          const { reports, onTable } = collect()
          yield* index.scavenge(dropEveryThird, onTable)
          // Tables 0..3, 4..7, 8..11 drop 0,3 / 6 / 9; entries 12..14 are in the memtable, 12 stays.
          assert.deepStrictEqual(
            reports.map((r) => [r.level, r.index, r.entriesKept, r.entriesDeleted]),
            [
              [0, 0, 2, 2],
              [0, 1, 3, 1],
              [0, 2, 3, 1]
            ]
          )
          const after = tableFiles(disk)
          assert.strictEqual(after.filter((f) => before.has(f)).length, 0, "every table was rewritten")
          const saved = [...before.values()].reduce((a, b) => a + b, 0) - after.reduce((a, f) => a + sizeOf(disk, f), 0)
          assert.strictEqual(
            reports.reduce((a, r) => a + r.spaceSaved, 0),
            saved
          )
          for (const r of reports)
            assert.strictEqual(
              r.spaceSaved,
              r.entriesDeleted * 24 + (r.entriesDeleted === 2 ? 28 : 0),
              "entries and a fence"
            )
          assert.strictEqual(index.stats().tableEntries, 8)
          yield* expectEntries(index, new Set(range(0, 15).filter((k) => k % 3 !== 0 || k >= 12)))
          // A second run has nothing left to drop.
          const again = collect()
          yield* index.scavenge(dropEveryThird, again.onTable)
          assert.deepStrictEqual(
            again.reports.map((r) => r.entriesDeleted),
            [0, 0, 0]
          )
        })
      )
    })
  )

  it("equals a model under random tables, keep sets and Effect answers (2-bit hash, reopen)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          n: fc.integer({ min: 0, max: 60 }),
          mem: fc.integer({ min: 1, max: 7 }),
          per: fc.integer({ min: 1, max: 4 }),
          chunk: fc.integer({ min: 1, max: 6 }),
          autoMerge: fc.boolean()
        }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 60, maxLength: 60 }),
        async (cfg, verdicts) => {
          const hash = weakHash(2)
          const config: TableIndexConfig = {
            dir: DIR,
            memtableMaxEntries: cfg.mem,
            entriesPerBlock: cfg.per,
            ioChunkBytes: 24 * cfg.chunk,
            autoMerge: cfg.autoMerge,
            hash,
            blockCacheBytes: 0
          }
          // 0: keep, 1: drop, 2: an Effect that keeps, 3: an Effect that drops.
          const calls = new Map<number, number>()
          const keep = (hi: number, lo: number, en: number, pos: number) => {
            const k = kOf(pos)
            const e = entry(k)
            const h = hash(e.stream)
            assert.isTrue(h.hi === hi && h.lo === lo && e.eventNumber === en, `key of entry ${k}`)
            calls.set(k, (calls.get(k) ?? 0) + 1)
            const v = verdicts[k]!
            return v < 2 ? v === 0 : Effect.sync(() => v === 2)
          }
          const inTables = Math.floor(cfg.n / cfg.mem) * cfg.mem
          const live = new Set(range(0, cfg.n).filter((k) => k >= inTables || verdicts[k]! % 2 === 0))
          const disk = new MemoryDisk()
          await Effect.runPromise(
            Effect.gen(function* () {
              yield* withIndex(disk.service, config, (index) =>
                Effect.gen(function* () {
                  addEntries(index, 0, cfg.n)
                  const { reports, onTable } = collect()
                  yield* index.scavenge(keep, onTable)
                  assert.deepStrictEqual(
                    [...calls.keys()].sort((a, b) => a - b),
                    range(0, inTables)
                  )
                  assert.isTrue(
                    [...calls.values()].every((c) => c === 1),
                    "keep runs once per entry"
                  )
                  assert.strictEqual(
                    reports.reduce((a, r) => a + r.entriesKept + r.entriesDeleted, 0),
                    inTables
                  )
                  assert.strictEqual(
                    reports.reduce((a, r) => a + r.entriesDeleted, 0),
                    range(0, inTables).filter((k) => verdicts[k]! % 2 === 1).length
                  )
                  yield* expectEntries(index, live)
                })
              )
              yield* withIndex(disk.service, { ...config, verifyOnOpen: true }, (index) =>
                Effect.gen(function* () {
                  for (let k = 0; k < cfg.n; k++)
                    if (k * 10 >= index.persistedPosition) index.addBatch([entry(k)], k * 10 + 1)
                  yield* expectEntries(index, live)
                  yield* index.mergeAll
                  yield* expectEntries(index, live)
                })
              )
            })
          )
        }
      ),
      { numRuns: 100 }
    )
  })

  it.effect("an Effect-returning keep works; its time counts in timeTakenMillis", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      yield* withIndex(disk.service, { dir: DIR, memtableMaxEntries: 5, autoMerge: false }, (index) =>
        Effect.gen(function* () {
          addEntries(index, 0, 10)
          yield* index.awaitIdle
          const { reports, onTable } = collect()
          // Entries 0..4 need a "log read" each (5 ms on the clock); 5..9 are answered at once.
          yield* index.scavenge(
            (_hi, _lo, _en, pos) =>
              kOf(pos) < 5 ? Effect.as(TestClock.adjust("5 millis"), kOf(pos) % 2 === 0) : kOf(pos) !== 7,
            onTable
          )
          assert.deepStrictEqual(
            reports.map((r) => [r.entriesKept, r.entriesDeleted, r.timeTakenMillis]),
            [
              [3, 2, 25],
              [4, 1, 0]
            ]
          )
          yield* expectEntries(index, new Set([0, 2, 4, 5, 6, 8, 9]))
        })
      )
    })
  )

  it.effect("hashOf is the index's stream hash", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      for (const hash of [streamHash64, weakHash(3)] as ReadonlyArray<HashFn>) {
        yield* withIndex(disk.service, { dir: `${DIR}-${hash === streamHash64 ? "a" : "b"}`, hash }, (index) =>
          Effect.sync(() => {
            for (const s of STREAMS) assert.deepStrictEqual(index.hashOf(s), hash(s))
          })
        )
      }
    })
  )
})

class LogReadFailed extends Data.TaggedError("LogReadFailed")<{ readonly position: number }> {}

describe("TableIndex.scavenge failures and concurrency", () => {
  it.effect(
    "a failing keep fails the scavenge with its error; finished tables stay new, the rest old; merges resume",
    () =>
      Effect.gen(function* () {
        const disk = new MemoryDisk()
        yield* withIndex(disk.service, { dir: DIR, memtableMaxEntries: 4, maxAutoMergeLevel: 0 }, (index) =>
          Effect.gen(function* () {
            addEntries(index, 0, 12)
            yield* index.awaitIdle
            const { reports, onTable } = collect()
            // Table 4..7 fails while it is written (6 was dropped first).
            const error = yield* Effect.flip(
              index.scavenge(
                (_hi, _lo, _en, pos) =>
                  kOf(pos) === 7 ? Effect.fail(new LogReadFailed({ position: pos })) : kOf(pos) % 3 !== 0,
                onTable
              )
            )
            assert.deepStrictEqual(error._tag === "LogReadFailed" ? error.position : error._tag, 70)
            assert.strictEqual(reports.length, 1)
            assert.strictEqual(tableFiles(disk).length, 3, "no half-written table is left")
            yield* expectEntries(index, new Set(range(0, 12).filter((k) => k >= 4 || k % 3 !== 0)))
            yield* index.mergeAll
            assert.strictEqual(index.stats().tables, 1)
            yield* expectEntries(index, new Set(range(0, 12).filter((k) => k >= 4 || k % 3 !== 0)))
          })
        )
      })
  )

  it.effect("concurrent addBatch and flush during a scavenge lose nothing; held-back merges run after it", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      const config: TableIndexConfig = { dir: DIR, memtableMaxEntries: 3, entriesPerBlock: 2, ioChunkBytes: 48 }
      yield* withIndex(yieldy(disk.service), config, (index) =>
        Effect.gen(function* () {
          addEntries(index, 0, 30)
          yield* index.flush
          const levelsBefore = index.stats().levels
          const { reports, onTable } = collect()
          let persistedAtEnd = 0
          // Entry 0 (in the last table scavenged) waits for the writer, so every flush and every merge
          // they call for falls inside the scavenge.
          const writerDone = yield* Deferred.make<void>()
          const keep = (hi: number, lo: number, en: number, pos: number) =>
            kOf(pos) === 0 ? Effect.as(Deferred.await(writerDone), false) : dropEveryThird(hi, lo, en, pos)
          const fiber = yield* Effect.fork(
            index.scavenge(keep, (t) => {
              persistedAtEnd = index.persistedPosition
              return onTable(t)
            })
          )
          for (let k = 30; k < 90; k++) {
            addEntries(index, k, k + 1)
            if (k % 7 === 0) yield* index.flush
            yield* Effect.yieldNow()
          }
          yield* Deferred.succeed(writerDone, undefined)
          yield* Fiber.join(fiber)
          assert.isAbove(persistedAtEnd, 301, "flushes completed during the scavenge")
          // The tables written meanwhile were not scavenged, and merges waited for the scavenge.
          assert.strictEqual(
            reports.reduce((a, r) => a + r.entriesKept + r.entriesDeleted, 0),
            30
          )
          assert.deepStrictEqual(
            reports.map((r) => r.level),
            levelsBefore.flatMap((count, level) => Array.from({ length: count }, () => level))
          )
          const live = new Set(range(0, 90).filter((k) => k >= 30 || k % 3 !== 0))
          yield* expectEntries(index, live)
          yield* index.flush
          const levels = index.stats().levels
          assert.isTrue(
            levels.every((c) => c < 2),
            `merged after the scavenge: ${levels.join(",")}`
          )
          yield* expectEntries(index, live)
        })
      )
      yield* withIndex(disk.service, { ...config, verifyOnOpen: true }, (index) =>
        expectEntries(index, new Set(range(0, 90).filter((k) => k >= 30 || k % 3 !== 0)))
      )
    })
  )

  it.effect("mergeAll during a scavenge waits for it, then merges every level into one table", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      yield* withIndex(yieldy(disk.service), { dir: DIR, memtableMaxEntries: 2, maxAutoMergeLevel: 2 }, (index) =>
        Effect.gen(function* () {
          addEntries(index, 0, 29)
          yield* index.awaitIdle
          assert.deepStrictEqual(index.stats().levels, [0, 1, 3])
          // Entry 0 holds the scavenge until the merge has been asked for and had every chance to run.
          const release = yield* Deferred.make<void>()
          const keep = (hi: number, lo: number, en: number, pos: number) =>
            kOf(pos) === 0 ? Effect.as(Deferred.await(release), false) : dropEveryThird(hi, lo, en, pos)
          const scavenge = yield* Effect.fork(index.scavenge(keep, () => Effect.void))
          for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
          const merge = yield* Effect.fork(index.mergeAll)
          for (let i = 0; i < 50; i++) yield* Effect.yieldNow()
          assert.isTrue(Option.isNone(yield* Fiber.poll(merge)), "mergeAll waits for the scavenge")
          assert.strictEqual(index.stats().tables, 4)
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(scavenge)
          yield* Fiber.join(merge)
          assert.deepStrictEqual(index.stats().levels, [0, 0, 1])
          assert.strictEqual(tableFiles(disk).length, 1)
          yield* expectEntries(index, new Set(range(0, 29).filter((k) => k >= 28 || k % 3 !== 0)))
        })
      )
    })
  )
})

/** Wraps every Disk operation with a yield, so the scavenge, flushes and appends interleave finely. */
const yieldy = (inner: DiskService): DiskService => gateDisk(inner, (e) => Effect.zipRight(Effect.yieldNow(), e))
