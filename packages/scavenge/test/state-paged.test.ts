/**
 * The paged scavenge state under a cache far smaller than the state: resident rows (page cache + delta)
 * stay within `cacheBytes` through accumulate-like writes, calculation-like walks, cleaning, compactions
 * and reopens, while every read equals a plain Map model; a power cut at every disk operation of a
 * compaction recovers the committed state exactly; and the synchronous peek contract.
 */
import { isDeepStrictEqual } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Disk, MemoryDisk, Prng, type DiskService } from "@vellum/platform"
import { Effect, Exit } from "effect"
import { lookupMetastream, lookupOriginal } from "../src/phases/StateAccess.js"
import {
  NotResident,
  openStateSession,
  type Checkpoint,
  type MetastreamData,
  type OriginalStreamData,
  type StateSession
} from "../src/state/index.js"
import { cutDisk } from "./state-support.js"

const DIR = "/state"
const sp = { position: 1 << 20, number: 1, effectiveNowMicros: 5, threshold: 0 }
const checkpointAt = (n: number): Checkpoint => ({ stage: "Accumulating", sp, doneLogicalChunk: n })

const original = (
  status: OriginalStreamData["status"],
  discardPoint: number,
  maxCount?: number
): OriginalStreamData => ({
  isTombstoned: false,
  maxAgeSeconds: undefined,
  maxCount,
  truncateBefore: undefined,
  discardPoint,
  maybeDiscardPoint: discardPoint,
  status
})

/** Names that do not arrive in name order (as streams do not in a log). */
const streamName = (i: number) => `s-${((i * 7919) % 100_003).toString(36)}-${i % 7}`

/** The committed state as Maps, and the session's view of it. */
class Model {
  originals = new Map<string, OriginalStreamData>()
  metastreams = new Map<string, MetastreamData>()

  copy(): Model {
    const m = new Model()
    m.originals = new Map(this.originals)
    m.metastreams = new Map(this.metastreams)
    return m
  }
}

/** Opens a session on `disk`, sampling its resident bytes before every disk operation. */
class Probe {
  session: StateSession | undefined
  maxResident = 0
  maxIndex = 0
  samples = 0
  /** The counts when resident bytes peaked, for the assertion's message. */
  peak = ""

  sample(): void {
    if (this.session === undefined) return
    const counts = this.session.counts()
    this.samples++
    if (counts.residentBytes > this.maxResident) this.peak = JSON.stringify(counts)
    this.maxResident = Math.max(this.maxResident, counts.residentBytes)
    this.maxIndex = Math.max(this.maxIndex, counts.indexBytes)
  }

  disk(inner: DiskService): DiskService {
    return cutDisk(inner, { used: 0, budget: Infinity }, () => this.sample())
  }

  open(disk: DiskService, cacheBytes: number, pageSize: number) {
    return Effect.tap(Effect.provideService(openStateSession(DIR, { pageSize, cacheBytes }), Disk, disk), (s) =>
      Effect.sync(() => {
        this.session = s
      })
    )
  }
}

/** Accumulate-like: look each stream up, then write its original (and every third one's metastream) row. */
const accumulateBatch = (s: StateSession, model: Model, names: ReadonlyArray<string>, chunk: number) =>
  Effect.gen(function* () {
    for (const [k, name] of names.entries()) {
      const before = (yield* lookupOriginal(s, name)) ?? original("Active", 0)
      const next = { ...before, maxCount: (k % 5) + 1, status: "Active" as const }
      s.setOriginalStream(name, next)
      model.originals.set(name, next)
      if (k % 3 === 0) {
        const meta = (yield* lookupMetastream(s, `$$${name}`)) ?? { isTombstoned: false, discardPoint: 0 }
        const nextMeta = { ...meta, discardPoint: meta.discardPoint + 1 }
        s.setMetastream(`$$${name}`, nextMeta)
        model.metastreams.set(`$$${name}`, nextMeta)
      }
    }
    s.addChunkWeight(chunk, names.length)
    yield* s.commit(checkpointAt(chunk))
  })

/** Everything the session shows, walked in order (a page at a time), against the model. */
const checkWhole = (s: StateSession, model: Model) =>
  Effect.gen(function* () {
    const active: Array<string> = []
    for (
      let page = yield* s.activeStreams(undefined, 997);
      page.length > 0;
      page = yield* s.activeStreams(page[page.length - 1], 997)
    ) {
      active.push(...page)
    }
    const expectedActive = [...model.originals]
      .filter(([, d]) => d.status === "Active")
      .map(([n]) => n)
      .sort()
    assert.deepStrictEqual(active, expectedActive)
    const seen: Array<string> = []
    let mismatches = 0
    yield* s.streamsWithData((name, o, m) => {
      seen.push(name)
      if (!isDeepStrictEqual(o, model.originals.get(name)) || !isDeepStrictEqual(m, model.metastreams.get(name)))
        mismatches++
    })
    assert.strictEqual(mismatches, 0)
    assert.deepStrictEqual(seen, [...new Set([...model.originals.keys(), ...model.metastreams.keys()])].sort())
    const counts = s.counts()
    assert.strictEqual(counts.originalStreams, model.originals.size)
    assert.strictEqual(counts.metastreams, model.metastreams.size)
    assert.strictEqual(counts.activeStreams, expectedActive.length)
  })

const checkSample = (s: StateSession, model: Model, names: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    for (const name of names) {
      assert.deepStrictEqual(yield* s.originalStream(name), model.originals.get(name), name)
      assert.deepStrictEqual(yield* s.metastream(`$$${name}`), model.metastreams.get(`$$${name}`), name)
    }
  })

type Step =
  | { readonly k: "calculate"; readonly from: number; readonly count: number; readonly salt: number }
  | { readonly k: "accumulate"; readonly from: number; readonly count: number }
  | { readonly k: "clean"; readonly includeArchived: boolean; readonly metastreams: boolean }
  | { readonly k: "rollback"; readonly from: number }
  | { readonly k: "reopen" }

const STREAMS = 20_000
const CACHE = 64 * 1024
const PAGE = 4096

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    k: fc.constant("calculate" as const),
    from: fc.nat(STREAMS - 1),
    count: fc.integer({ min: 1, max: 400 }),
    salt: fc.nat(5)
  }),
  fc.record({
    k: fc.constant("accumulate" as const),
    from: fc.nat(STREAMS - 1),
    count: fc.integer({ min: 1, max: 60 })
  }),
  fc.record({ k: fc.constant("clean" as const), includeArchived: fc.boolean(), metastreams: fc.boolean() }),
  fc.record({ k: fc.constant("rollback" as const), from: fc.nat(STREAMS - 1) }),
  fc.constant({ k: "reopen" as const })
)

describe("scavenge state: paged, within ScavengeBackendCacheSize", () => {
  it(
    "20,000 streams under a 64 KiB cache: resident bytes stay within it, reads equal a Map model",
    { timeout: 600_000 },
    async () => {
      const names = Array.from({ length: STREAMS }, (_, i) => streamName(i))
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 6 }), (steps) =>
          Effect.runPromise(
            Effect.gen(function* () {
              const mem = new MemoryDisk()
              const probe = new Probe()
              const disk = probe.disk(mem.service)
              let s = yield* probe.open(disk, CACHE, PAGE)
              const model = new Model()
              for (let i = 0; i < STREAMS; i += 50) yield* accumulateBatch(s, model, names.slice(i, i + 50), i / 50)
              yield* checkWhole(s, model)
              for (const st of steps) {
                if (st.k === "accumulate") {
                  yield* accumulateBatch(s, model, names.slice(st.from, st.from + st.count), st.from)
                } else if (st.k === "calculate") {
                  // A calculator batch: walk Active streams after a name, settle some, commit with the last name.
                  const batch = yield* s.activeStreams(names[st.from], st.count)
                  for (const [k, name] of batch.entries()) {
                    const data = (yield* s.originalStream(name))!
                    const status = (["Spent", "Archived", "Active"] as const)[(k + st.salt) % 3]!
                    const next = {
                      ...data,
                      status,
                      discardPoint: data.discardPoint + 1,
                      maybeDiscardPoint: data.discardPoint + 1
                    }
                    s.setOriginalStream(name, next)
                    model.originals.set(name, next)
                  }
                  yield* s.commit({ stage: "Calculating", sp, doneStream: batch.at(-1) })
                } else if (st.k === "clean") {
                  s.deleteSpentStreams(st.includeArchived)
                  for (const [n, d] of [...model.originals])
                    if (d.status === "Spent" || (st.includeArchived && d.status === "Archived"))
                      model.originals.delete(n)
                  if (st.metastreams) {
                    s.deleteAllMetastreams()
                    model.metastreams.clear()
                  }
                  yield* s.commit({ stage: "Cleaning", sp })
                } else if (st.k === "rollback") {
                  const name = names[st.from]!
                  s.setOriginalStream(name, original("Spent", 99))
                  s.deleteAllMetastreams()
                  s.rollback()
                } else {
                  yield* s.close
                  s = yield* probe.open(disk, CACHE, PAGE)
                }
                yield* checkSample(
                  s,
                  model,
                  names.filter((_, i) => i % 97 === 0)
                )
              }
              yield* checkWhole(s, model)
              assert.isAtMost(probe.maxResident, CACHE, probe.peak)
              // The directory and Bloom filters, outside the budget: at most ~1.9 bytes per row plus a name per page.
              assert.isAtMost(probe.maxIndex, 4 * (STREAMS + STREAMS / 3))
              console.log(
                `paged state: max resident ${probe.maxResident} B of ${CACHE}, max index ${probe.maxIndex} B, ${probe.samples} samples`
              )
              assert.isAbove(probe.samples, 1000)
              yield* s.close
            })
          )
        ),
        { numRuns: 2 }
      )
    }
  )
})

describe("scavenge state: a power cut in a compaction", () => {
  const OPTIONS = { pageSize: 512, cacheBytes: 16 * 1024 }
  const names = Array.from({ length: 600 }, (_, i) => streamName(i))

  /** A state with 500 streams, then the commit of 100 more that makes it compact, under a power budget. */
  const run = (mem: MemoryDisk, budget: number) =>
    Effect.gen(function* () {
      const cut = { used: 0, budget: Infinity }
      const disk = cutDisk(mem.service, cut)
      const s = yield* Effect.provideService(openStateSession(DIR, OPTIONS), Disk, disk)
      const before = new Model()
      for (let i = 0; i < 500; i += 100) yield* accumulateBatch(s, before, names.slice(i, i + 100), i)
      const after = before.copy()
      const snapshotBefore = s.counts().snapshotBytes
      const start = cut.used
      cut.budget = start + budget
      const exit = yield* Effect.exit(accumulateBatch(s, after, names.slice(500), 500))
      return { before, after, exit, used: cut.used - start, compacted: s.counts().snapshotBytes !== snapshotBefore }
    })

  it.effect(
    "at every disk operation of the commit and its compaction, reopening gives the committed state exactly",
    () =>
      Effect.gen(function* () {
        const full = yield* run(new MemoryDisk(), Infinity)
        assert.isTrue(Exit.isSuccess(full.exit))
        assert.isTrue(full.compacted, "the commit must compact")
        // Write + sync of the journal frame, then the compaction's own operations.
        assert.isAbove(full.used, 6)
        for (let budget = 0; budget <= full.used; budget++) {
          for (const mode of ["strict", "random"] as const) {
            const mem = new MemoryDisk()
            const { before, after, exit } = yield* run(mem, budget)
            assert.strictEqual(Exit.isSuccess(exit), budget >= full.used, `budget ${budget}`)
            mem.crash(new Prng(budget), mode)
            const s = yield* Effect.provideService(openStateSession(DIR, OPTIONS), Disk, mem.service)
            // Once the journal frame is synced (the 2nd operation) the commit is durable, whatever followed.
            const expected = budget >= 2 ? after : (yield* s.originalStream(names[599]!)) === undefined ? before : after
            yield* checkWhole(s, expected)
            assert.deepStrictEqual(s.checkpoint(), checkpointAt(expected === after ? 500 : 400))
            yield* s.close
          }
        }
      })
  )
})

describe("scavenge state: peek and the page read behind it", () => {
  it.effect("peek answers without I/O or says NotResident; the Effect lookup reads the row; writes are peeked", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const options = { pageSize: 512, cacheBytes: 8 * 1024 }
      const s = yield* Effect.provideService(openStateSession(DIR, options), Disk, mem.service)
      const model = new Model()
      const names = Array.from({ length: 400 }, (_, i) => streamName(i))
      for (let i = 0; i < names.length; i += 40) yield* accumulateBatch(s, model, names.slice(i, i + 40), i)
      const reads = mem.stats.reads
      // A name no stream has: the Bloom filter answers (almost always) without a page.
      assert.strictEqual(s.peekOriginalStream("no-such-stream"), undefined)
      const cold = names.filter((n) => s.peekOriginalStream(n) === NotResident)
      assert.isAbove(cold.length, 100, "most rows are not resident under an 8 KiB cache")
      for (const name of names) {
        const peeked = s.peekOriginalStream(name)
        if (peeked !== NotResident) assert.deepStrictEqual(peeked, model.originals.get(name), name)
      }
      assert.strictEqual(mem.stats.reads, reads, "peek does no I/O")
      for (const name of cold) assert.deepStrictEqual(yield* lookupOriginal(s, name), model.originals.get(name), name)
      assert.isAbove(mem.stats.reads, reads, "the lookup of a cold row reads its page")
      // The session's uncommitted writes (a row, a wholesale deletion) answer without I/O; commits keep them.
      const changed = cold[0]!
      s.setOriginalStream(changed, original("Spent", 7))
      assert.deepStrictEqual(s.peekOriginalStream(changed), original("Spent", 7))
      yield* s.commit(checkpointAt(1000))
      assert.deepStrictEqual(yield* lookupOriginal(s, changed), original("Spent", 7))
      s.deleteSpentStreams(false)
      assert.strictEqual(s.peekOriginalStream(changed), undefined)
      yield* s.commit(checkpointAt(1001))
      assert.strictEqual(yield* lookupOriginal(s, changed), undefined)
      assert.strictEqual(s.counts().residentBytes, s.counts().pageCacheBytes + s.counts().deltaBytes)
      yield* s.close
    })
  )

  it.effect("a damaged snapshot page is StateCorrupt when read, not a missing row", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const options = { pageSize: 512, cacheBytes: 2048, compactAfterBytes: 1 }
      const s = yield* Effect.provideService(openStateSession(DIR, options), Disk, mem.service)
      const model = new Model()
      const names = Array.from({ length: 200 }, (_, i) => streamName(i))
      yield* accumulateBatch(s, model, names, 0)
      yield* s.close
      const path = `${DIR}/scavenge-state.snapshot`
      const bytes = Buffer.from(mem.readFileSync(path))
      bytes[600]! ^= 0x40
      const handle = yield* mem.service.open(path)
      yield* handle.write(0, bytes)
      yield* handle.sync
      yield* handle.close
      const reopened = yield* Effect.provideService(
        openStateSession(DIR, { ...options, cacheBytes: 0 }),
        Disk,
        mem.service
      )
      const errors = yield* Effect.forEach(names, (n) => Effect.flip(reopened.originalStream(n)).pipe(Effect.option))
      const corrupt = errors.filter((e) => e._tag === "Some")
      assert.isAbove(corrupt.length, 0)
      for (const e of corrupt) if (e._tag === "Some") assert.strictEqual(e.value._tag, "StateCorrupt")
    })
  )
})
