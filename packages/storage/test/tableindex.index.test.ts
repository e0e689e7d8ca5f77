import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fc from "fast-check"
import { Disk, DiskError, gateDisk, MemoryDisk, Prng, type DiskService } from "@vellum/platform"
import { compareLatest, type IndexEntry, type NewIndexEntry } from "../src/tableindex/Entry.js"
import { type HashFn, weakHash } from "../src/tableindex/StreamHash.js"
import { open, type TableIndex, type TableIndexConfig, wipe } from "../src/tableindex/TableIndex.js"

// ---- model ----

interface Batch {
  readonly entries: ReadonlyArray<NewIndexEntry>
  readonly start: number
  readonly end: number
}

class Model {
  readonly batches: Array<Batch> = []
  readonly owner = new Map<number, string>()
  readonly byStream = new Map<string, Array<NewIndexEntry>>()
  end = 0

  add(entries: ReadonlyArray<NewIndexEntry>, end: number): Batch {
    const b = { entries, start: this.end, end }
    this.batches.push(b)
    this.end = end
    for (const e of entries) {
      this.owner.set(e.position, e.stream)
      const list = this.byStream.get(e.stream) ?? []
      list.push(e)
      this.byStream.set(e.stream, list)
    }
    return b
  }

  /** The batches to replay when the index is durable up to `persisted`. */
  replayFrom(persisted: number): ReadonlyArray<Batch> {
    if (persisted !== 0 && !this.batches.some((b) => b.end === persisted))
      throw new Error(`persistedPosition ${persisted} is not a batch boundary`)
    return this.batches.filter((b) => b.start >= persisted)
  }

  asc(stream: string): Array<[number, number]> {
    return (this.byStream.get(stream) ?? [])
      .map((e): [number, number] => [e.eventNumber, e.position])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1])
  }
}

const pairs = (es: ReadonlyArray<IndexEntry>) => es.map((e) => [e.eventNumber, e.position])

/** Checks range and latest of every stream against the model (as the caller would use them). */
const checkAll = (index: TableIndex, model: Model, streams: ReadonlyArray<string>, hash: HashFn) =>
  Effect.gen(function* () {
    for (const stream of streams) {
      const h = hash(stream)
      const want = model.asc(stream)
      const all = yield* index.range(stream, 0, Number.MAX_SAFE_INTEGER)
      const seen = new Set<number>()
      for (let i = 0; i < all.length; i++) {
        const e = all[i]!
        const owner = model.owner.get(e.position)
        assert.isDefined(owner, `unknown position ${e.position}`)
        const oh = hash(owner!)
        assert.isTrue(oh.hi === h.hi && oh.lo === h.lo, "an entry of a stream with another hash")
        if (e.exact) assert.strictEqual(owner, stream)
        assert.isFalse(seen.has(e.position), `position ${e.position} returned twice`)
        seen.add(e.position)
        if (i > 0) {
          const p = all[i - 1]!
          assert.isTrue(
            p.eventNumber < e.eventNumber || (p.eventNumber === e.eventNumber && p.position <= e.position),
            "not ascending"
          )
        }
      }
      assert.deepStrictEqual(pairs(all.filter((e) => model.owner.get(e.position) === stream)), want)
      if (want.length > 0) {
        const from = want[Math.floor(want.length / 3)]![0]
        const to = want[Math.floor((want.length * 2) / 3)]![0]
        const part = yield* index.range(stream, from, to)
        assert.deepStrictEqual(
          pairs(part.filter((e) => model.owner.get(e.position) === stream)),
          want.filter(([en]) => en >= from && en <= to)
        )
      }
      const desc = [...want].sort((a, b) => b[0] - a[0] || a[1] - b[1])
      for (const limit of [1, 3, 10_000]) {
        const got = yield* index.latest(stream, limit)
        assert.isAtMost(got.length, limit)
        for (let i = 1; i < got.length; i++) assert.isAtMost(compareLatest(got[i - 1]!, got[i]!), 0)
        const mine = pairs(got.filter((e) => model.owner.get(e.position) === stream))
        assert.deepStrictEqual(mine, desc.slice(0, mine.length))
        if (got.length < limit) assert.strictEqual(mine.length, desc.length)
      }
    }
  })

// ---- disks ----

/** Wraps every Disk operation with a yield, so background work and reads interleave finely. */
const yieldy = (inner: DiskService): DiskService => gateDisk(inner, (e) => Effect.zipRight(Effect.yieldNow(), e))

const STREAMS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "$$alpha"]
const DIR = "/db/index"

/** Opens an index in a fresh scope; returns it with the scope to close it. */
const openIn = (service: DiskService, config: TableIndexConfig) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const index = yield* open(config).pipe(Scope.extend(scope), Effect.provide(Layer.succeed(Disk, service)))
    return { index, scope }
  })

type Cmd =
  | { readonly t: "batch"; readonly picks: ReadonlyArray<readonly [number, number]>; readonly gap: number }
  | { readonly t: "flush" }
  | { readonly t: "mergeAll" }
  | { readonly t: "idle" }
  | { readonly t: "check" }
  | { readonly t: "reopen" }
  | { readonly t: "yield"; readonly n: number }

const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      t: fc.constant("batch" as const),
      picks: fc.array(fc.tuple(fc.nat(STREAMS.length - 1), fc.nat(9)), { maxLength: 6 }),
      gap: fc.nat(3)
    })
  },
  { weight: 1, arbitrary: fc.constant({ t: "flush" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "mergeAll" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "idle" as const }) },
  { weight: 2, arbitrary: fc.constant({ t: "check" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "reopen" as const }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("yield" as const), n: fc.integer({ min: 1, max: 30 }) }) }
)

/** Turns picks into entries: next event number mostly, sometimes a duplicate, a gap, or the tombstone. */
const makeBatch = (
  model: Model,
  last: Map<string, number>,
  picks: ReadonlyArray<readonly [number, number]>,
  gap: number,
  pos: { at: number }
) => {
  const entries: Array<NewIndexEntry> = []
  for (const [s, kind] of picks) {
    const stream = STREAMS[s]!
    const prev = last.get(stream) ?? -1
    if (prev === Number.MAX_SAFE_INTEGER) continue
    const eventNumber =
      kind === 0
        ? Math.max(prev, 0)
        : kind === 1
          ? prev + 3
          : kind === 2 && prev > 5
            ? Number.MAX_SAFE_INTEGER
            : prev + 1
    last.set(stream, eventNumber)
    entries.push({ stream, eventNumber, position: pos.at })
    pos.at += 1 + gap
  }
  pos.at += gap
  return entries
}

describe("TableIndex", () => {
  it("equals a brute-force model under random batches, flushes, merges, reopens (2-bit hash)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(cmdArb, { minLength: 5, maxLength: 70 }),
        fc.record({
          mem: fc.integer({ min: 1, max: 8 }),
          per: fc.integer({ min: 1, max: 5 }),
          levels: fc.integer({ min: 2, max: 3 }),
          big: fc.boolean(),
          yieldy: fc.boolean(),
          autoMerge: fc.boolean()
        }),
        async (cmds, cfg) => {
          const disk = new MemoryDisk()
          const service = cfg.yieldy ? yieldy(disk.service) : disk.service
          const hash = weakHash(2)
          const config: TableIndexConfig = {
            dir: DIR,
            memtableMaxEntries: cfg.mem,
            tablesPerLevel: cfg.levels,
            entriesPerBlock: cfg.per,
            hash,
            blockCacheBytes: 24 * cfg.per * 4,
            autoMerge: cfg.autoMerge,
            ioChunkBytes: 24 * 3,
            verifyOnOpen: true
          }
          const base = cfg.big ? 2 ** 33 : 0
          const program = Effect.gen(function* () {
            const model = new Model()
            const last = new Map<string, number>()
            const pos = { at: base }
            let { index, scope } = yield* openIn(service, config)
            // The log may start high (positions above 2^32): a first batch without index entries.
            model.add([], base)
            index.addBatch([], base)
            for (const cmd of cmds) {
              switch (cmd.t) {
                case "batch": {
                  const entries = makeBatch(model, last, cmd.picks, cmd.gap, pos)
                  model.add(entries, pos.at)
                  index.addBatch(entries, pos.at)
                  assert.strictEqual(index.coveredPosition, pos.at)
                  break
                }
                case "flush":
                  yield* index.flush
                  assert.strictEqual(index.persistedPosition, model.end)
                  assert.strictEqual(index.stats().memtableEntries, 0)
                  break
                case "mergeAll":
                  yield* index.mergeAll
                  assert.isAtMost(index.stats().tables, 1)
                  break
                case "idle":
                  yield* index.awaitIdle
                  break
                case "yield":
                  for (let i = 0; i < cmd.n; i++) yield* Effect.yieldNow()
                  break
                case "check":
                  yield* checkAll(index, model, STREAMS, hash)
                  break
                case "reopen": {
                  yield* Scope.close(scope, Exit.void)
                  ;({ index, scope } = yield* openIn(service, config))
                  const persisted = index.persistedPosition
                  assert.strictEqual(index.coveredPosition, persisted)
                  assert.isAtMost(persisted, model.end)
                  for (const b of model.replayFrom(persisted)) index.addBatch(b.entries, b.end)
                  assert.strictEqual(index.coveredPosition, model.end)
                  break
                }
              }
            }
            yield* checkAll(index, model, STREAMS, hash)
            yield* index.awaitIdle
            yield* checkAll(index, model, STREAMS, hash)
            const s = index.stats()
            // Entries persisted before a reopen are in tables once, replayed ones in memtables once.
            assert.strictEqual(s.memtableEntries + s.tableEntries, model.owner.size)
            yield* Scope.close(scope, Exit.void)
            assert.strictEqual(disk.openHandleCount(), 0)
          })
          await Effect.runPromise(program)
        }
      ),
      { numRuns: 150 }
    )
  })
})

// ---- crashes ----

/** A disk that crashes the MemoryDisk at its `crashAt`-th operation; every later operation fails. */
const crashing = (disk: MemoryDisk, crashAt: number, prng: Prng, mode: "random" | "strict") => {
  const state = { ops: 0, crashed: false, coveredAtCrash: -1, onCrash: () => {} }
  const gate = <A, E>(e: Effect.Effect<A, E>): Effect.Effect<A, E | DiskError> =>
    Effect.suspend((): Effect.Effect<A, E | DiskError> => {
      if (!state.crashed && state.ops++ === crashAt) {
        state.crashed = true
        state.onCrash()
        disk.crash(prng, mode)
      }
      return state.crashed
        ? Effect.fail(new DiskError({ reason: "IOError", op: "crashed", path: "", message: "the node crashed" }))
        : e
    })
  const service = gateDisk(disk.service, gate)
  return { service, state }
}

interface Step {
  readonly picks: ReadonlyArray<readonly [number, number]>
  readonly gap: number
  readonly pause: number
  readonly flush: boolean
}

/** Runs the steps on an index over `service` (which may crash under it); returns the model of the log. */
const crashWorkload = (
  service: DiskService,
  config: TableIndexConfig,
  steps: ReadonlyArray<Step>,
  onOpen: (index: TableIndex) => void
) =>
  Effect.gen(function* () {
    const model = new Model()
    const last = new Map<string, number>()
    const pos = { at: 0 }
    const opened = yield* Effect.either(openIn(service, config))
    if (opened._tag === "Left") return model
    const { index, scope } = opened.right
    onOpen(index)
    for (const step of steps) {
      const entries = makeBatch(model, last, step.picks, step.gap, pos)
      model.add(entries, pos.at)
      index.addBatch(entries, pos.at)
      for (let i = 0; i < step.pause; i++) yield* Effect.yieldNow()
      if (step.flush && step.pause === 0) yield* Effect.either(index.flush)
    }
    yield* Effect.either(index.awaitIdle)
    yield* Scope.close(scope, Exit.void)
    return model
  })

describe("TableIndex crash safety", () => {
  it("a crash at any point during flushes and merges leaves an openable index; replay restores the answers", async () => {
    const stepArb = fc.record({
      picks: fc.array(fc.tuple(fc.nat(STREAMS.length - 1), fc.nat(9)), { maxLength: 5 }),
      gap: fc.nat(2),
      pause: fc.nat(6),
      flush: fc.boolean()
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer(),
        fc.boolean(),
        fc.integer({ min: 1, max: 6 }),
        async (steps, crashFraction, seed, strict, mem) => {
          const hash = weakHash(2)
          const config: TableIndexConfig = {
            dir: DIR,
            memtableMaxEntries: mem,
            tablesPerLevel: 2,
            entriesPerBlock: 2,
            hash,
            ioChunkBytes: 24 * 4
          }
          // A dry run counts the Disk operations of the workload (it is deterministic), to crash inside it.
          const dry = crashing(new MemoryDisk(), Number.POSITIVE_INFINITY, new Prng(seed), "strict")
          await Effect.runPromise(crashWorkload(dry.service, config, steps, () => {}))
          const crashAt = Math.floor(crashFraction * dry.state.ops)

          const disk = new MemoryDisk()
          const { service, state } = crashing(disk, crashAt, new Prng(seed), strict ? "strict" : "random")
          const program = Effect.gen(function* () {
            const model = yield* crashWorkload(service, config, steps, (index) => {
              state.onCrash = () => (state.coveredAtCrash = index.coveredPosition)
            })
            if (!state.crashed) {
              state.crashed = true
              state.coveredAtCrash = model.end
              disk.crash(new Prng(seed), strict ? "strict" : "random")
            }
            // A new node boots on what the crash left.
            const { index, scope } = yield* openIn(disk.service, { ...config, verifyOnOpen: true })
            assert.isAtMost(index.persistedPosition, Math.max(0, state.coveredAtCrash))
            const names = yield* disk.service.list(DIR)
            assert.strictEqual(
              names.filter((n) => n !== "indexmap").length,
              index.stats().tables,
              `leftover files: ${names.join(",")}`
            )
            for (const b of model.replayFrom(index.persistedPosition)) index.addBatch(b.entries, b.end)
            yield* checkAll(index, model, STREAMS, hash)
            yield* index.flush
            yield* checkAll(index, model, STREAMS, hash)
            yield* Scope.close(scope, Exit.void)
          })
          await Effect.runPromise(program)
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("TableIndex crash at every operation", () => {
  it("crashing at each Disk operation of a flush-and-merge workload is always recoverable", async () => {
    const hash = weakHash(2)
    const config: TableIndexConfig = {
      dir: DIR,
      memtableMaxEntries: 3,
      tablesPerLevel: 2,
      entriesPerBlock: 2,
      hash,
      ioChunkBytes: 24 * 2
    }
    const steps: Array<Step> = Array.from({ length: 14 }, (_, k) => ({
      picks: [
        [k % STREAMS.length, 3],
        [(k * 5) % STREAMS.length, k % 4]
      ],
      gap: k % 2,
      pause: k % 3 === 0 ? 0 : 4,
      flush: k % 5 === 4
    }))
    const dry = crashing(new MemoryDisk(), Number.POSITIVE_INFINITY, new Prng(0), "strict")
    await Effect.runPromise(crashWorkload(dry.service, config, steps, () => {}))
    assert.isAbove(dry.state.ops, 100)
    for (let crashAt = 0; crashAt <= dry.state.ops; crashAt++) {
      for (const [seed, mode] of [
        [1, "strict"],
        [2, "random"],
        [3, "random"],
        [4, "random"]
      ] as const) {
        const disk = new MemoryDisk()
        const { service, state } = crashing(disk, crashAt, new Prng(seed * 1000 + crashAt), mode)
        await Effect.runPromise(
          Effect.gen(function* () {
            const model = yield* crashWorkload(service, config, steps, (index) => {
              state.onCrash = () => (state.coveredAtCrash = index.coveredPosition)
            })
            if (!state.crashed) {
              state.coveredAtCrash = model.end
              disk.crash(new Prng(seed), mode)
            }
            const reopened = yield* Effect.either(openIn(disk.service, { ...config, verifyOnOpen: true }))
            if (reopened._tag === "Left")
              assert.fail(`crash at op ${crashAt} (${mode}, seed ${seed}): ${reopened.left.message}`)
            const { index, scope } = reopened.right
            assert.isAtMost(index.persistedPosition, Math.max(0, state.coveredAtCrash))
            for (const b of model.replayFrom(index.persistedPosition)) index.addBatch(b.entries, b.end)
            yield* checkAll(index, model, STREAMS, hash)
            yield* Scope.close(scope, Exit.void)
          })
        )
      }
    }
  })
})

// ---- levels, corruption, concurrency ----

const withIndex = <A, E>(disk: MemoryDisk, config: TableIndexConfig, f: (index: TableIndex) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.scoped(Effect.flatMap(open(config), f)).pipe(Effect.provide(Layer.succeed(Disk, disk.service)))
  )

const digits = (n: number, base: number): Array<number> => {
  const out: Array<number> = []
  for (; n > 0; n = Math.floor(n / base)) out.push(n % base)
  return out
}

describe("TableIndex levels", () => {
  for (const tablesPerLevel of [2, 3]) {
    it(`merges like a base-${tablesPerLevel} counter`, async () => {
      const disk = new MemoryDisk()
      await withIndex(disk, { dir: DIR, memtableMaxEntries: 1, tablesPerLevel }, (index) =>
        Effect.gen(function* () {
          for (let k = 1; k <= 30; k++) {
            index.addBatch([{ stream: `s${k % 4}`, eventNumber: k, position: k * 10 }], k * 10 + 1)
            yield* index.awaitIdle
            const levels = [...index.stats().levels]
            while (levels.length > 0 && levels[levels.length - 1] === 0) levels.pop()
            assert.deepStrictEqual(levels, digits(k, tablesPerLevel), `after ${k} tables`)
            assert.strictEqual(index.persistedPosition, k * 10 + 1)
          }
          assert.strictEqual(index.stats().tableEntries, 30)
          const got = yield* index.range("s1", 0, 100)
          assert.deepStrictEqual(
            got.map((e) => e.eventNumber).filter((en) => en % 4 === 1),
            [1, 5, 9, 13, 17, 21, 25, 29]
          )
          // Merged-away files are gone.
          assert.strictEqual(disk.files().filter((f) => f.endsWith(".vtable")).length, index.stats().tables)
        })
      )
    })
  }

  it("respects maxAutoMergeLevel and mergeAll merges everything", async () => {
    const disk = new MemoryDisk()
    await withIndex(disk, { dir: DIR, memtableMaxEntries: 1, maxAutoMergeLevel: 1 }, (index) =>
      Effect.gen(function* () {
        for (let k = 1; k <= 9; k++) {
          index.addBatch([{ stream: "s", eventNumber: k, position: k }], k + 1)
          yield* index.awaitIdle
        }
        assert.deepStrictEqual(index.stats().levels, [1, 4])
        yield* index.mergeAll
        assert.deepStrictEqual(index.stats().levels, [0, 1])
        assert.deepStrictEqual(
          (yield* index.latest("s", 2)).map((e) => e.eventNumber),
          [9, 8]
        )
      })
    )
  })

  it("merges levels left full by an earlier run when it opens", async () => {
    const disk = new MemoryDisk()
    await withIndex(disk, { dir: DIR, memtableMaxEntries: 1, autoMerge: false }, (index) =>
      Effect.gen(function* () {
        for (let k = 0; k < 5; k++) index.addBatch([{ stream: "s", eventNumber: k, position: k }], k + 1)
        yield* index.awaitIdle
        assert.deepStrictEqual(index.stats().levels, [5])
      })
    )
    await withIndex(disk, { dir: DIR, memtableMaxEntries: 1 }, (index) =>
      Effect.gen(function* () {
        yield* index.awaitIdle
        assert.deepStrictEqual(index.stats().levels, [0, 1])
        assert.strictEqual(index.persistedPosition, 5)
        assert.deepStrictEqual(
          (yield* index.latest("s", 10)).map((e) => e.eventNumber),
          [4, 3, 2, 1, 0]
        )
      })
    )
  })

  it("autoMerge false keeps level 0; flush with no entries still advances persistedPosition", async () => {
    const disk = new MemoryDisk()
    await withIndex(disk, { dir: DIR, memtableMaxEntries: 2, autoMerge: false }, (index) =>
      Effect.gen(function* () {
        for (let k = 0; k < 8; k++) index.addBatch([{ stream: "s", eventNumber: k, position: k * 2 }], k * 2 + 1)
        yield* index.awaitIdle
        assert.deepStrictEqual(index.stats().levels, [4])
        index.addBatch([], 100)
        yield* index.flush
        assert.strictEqual(index.persistedPosition, 100)
        assert.strictEqual(index.stats().tables, 4)
      })
    )
  })
})

describe("TableIndex backpressure", () => {
  it("awaitCapacity holds a writer that outruns the flushes", async () => {
    const disk = new MemoryDisk()
    await withIndex(disk, { dir: DIR, memtableMaxEntries: 2, maxFrozenMemtables: 1 }, (index) =>
      Effect.gen(function* () {
        for (let k = 0; k < 20; k++) index.addBatch([{ stream: "s", eventNumber: k, position: k }], k + 1)
        assert.strictEqual(index.stats().memtables, 11)
        yield* index.awaitCapacity
        assert.isAtMost(index.stats().memtables, 2)
        for (let k = 20; k < 40; k++) {
          index.addBatch([{ stream: "s", eventNumber: k, position: k }], k + 1)
          yield* index.awaitCapacity
          assert.isAtMost(index.stats().memtables, 2)
        }
        yield* index.flush
        assert.deepStrictEqual(
          (yield* index.range("s", 0, 100)).map((e) => e.eventNumber),
          Array.from({ length: 40 }, (_, i) => i)
        )
      })
    )
  })
})

describe("TableIndex corruption", () => {
  const setup = async () => {
    const disk = new MemoryDisk()
    await withIndex(disk, { dir: DIR, memtableMaxEntries: 4, autoMerge: false }, (index) =>
      Effect.gen(function* () {
        for (let k = 0; k < 10; k++) index.addBatch([{ stream: "s", eventNumber: k, position: k }], k + 1)
        yield* index.flush
      })
    )
    const tables = disk.files().filter((f) => f.endsWith(".vtable"))
    return { disk, tables }
  }
  const openResult = (disk: MemoryDisk, config: Partial<TableIndexConfig> = {}) =>
    withIndex(disk, { dir: DIR, ...config }, (index) => Effect.succeed(index.persistedPosition)).then(
      (v) => `ok ${v}`,
      (e: unknown) => String(e)
    )
  const patch = (disk: MemoryDisk, path: string, at: (size: number) => number) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const h = yield* disk.service.open(path)
        const size = yield* h.size
        const [b] = yield* h.read(at(size), 1)
        yield* h.write(at(size), Buffer.from([b! ^ 0x40]))
        yield* h.close
      })
    )

  it("opens cleanly when intact", async () => {
    const { disk, tables } = await setup()
    assert.strictEqual(tables.length, 3)
    assert.strictEqual(await openResult(disk, { verifyOnOpen: true }), "ok 10")
  })

  it("a damaged manifest is IndexCorrupt; wipe lets the caller rebuild from the log", async () => {
    const { disk } = await setup()
    await Effect.runPromise(disk.service.open(`${DIR}/keep-me`, { create: true }))
    await patch(disk, `${DIR}/indexmap`, (size) => size - 8)
    assert.match(await openResult(disk), /IndexCorrupt/)
    await Effect.runPromise(Effect.provide(wipe(DIR), Layer.succeed(Disk, disk.service)))
    assert.deepStrictEqual(disk.files(), [`${DIR}/keep-me`])
    assert.strictEqual(await openResult(disk), "ok 0")
  })

  it("a missing table is IndexCorrupt", async () => {
    const { disk, tables } = await setup()
    await Effect.runPromise(disk.service.remove(tables[0]!))
    assert.match(await openResult(disk), /IndexCorrupt.*missing/)
  })

  it("damaged fences are IndexCorrupt on open; damaged entries with verifyOnOpen, or at the next merge", async () => {
    const { disk, tables } = await setup()
    const before = disk.readFileSync(tables[0]!)
    await patch(disk, tables[0]!, () => 64 + 5)
    assert.strictEqual(await openResult(disk), "ok 10")
    assert.match(await openResult(disk, { verifyOnOpen: true }), /IndexCorrupt.*block 0 CRC mismatch/)
    const merged = await withIndex(disk, { dir: DIR }, (index) => Effect.either(index.mergeAll))
    assert.strictEqual(merged._tag === "Left" ? merged.left._tag : "merged", "IndexCorrupt", JSON.stringify(merged))
    // Restore the entries and damage a fence instead.
    await Effect.runPromise(Effect.flatMap(disk.service.open(tables[0]!), (h) => h.write(0, before)))
    const entries = before.readUInt32LE(16)
    await patch(disk, tables[0]!, () => 64 + entries * 24 + 2)
    assert.match(await openResult(disk), /IndexCorrupt.*fences CRC/)
  })
})

describe("TableIndex under read faults", () => {
  it("bits flipped on read are re-read, or reported as IndexCorrupt; answers are never wrong", async () => {
    const disk = new MemoryDisk({ prng: new Prng(7) })
    const hash = weakHash(2)
    const config: TableIndexConfig = {
      dir: DIR,
      memtableMaxEntries: 6,
      entriesPerBlock: 3,
      hash,
      blockCacheBytes: 0,
      autoMerge: false
    }
    const model = new Model()
    await withIndex(disk, config, (index) =>
      Effect.gen(function* () {
        const last = new Map<string, number>()
        const pos = { at: 0 }
        for (let k = 0; k < 60; k++) {
          const entries = makeBatch(
            model,
            last,
            [
              [k % STREAMS.length, 3],
              [(k * 3) % STREAMS.length, 3]
            ],
            0,
            pos
          )
          model.add(entries, pos.at)
          index.addBatch(entries, pos.at)
        }
        yield* index.flush
      })
    )
    let ok = 0
    let corrupt = 0
    disk.setFaults({ bitFlipOnRead: 0.08 })
    for (let round = 0; round < 20; round++) {
      const r = await Effect.runPromise(
        Effect.either(
          Effect.scoped(
            Effect.flatMap(open(config), (index) =>
              Effect.zipRight(index.mergeAll, checkAll(index, model, STREAMS, hash))
            )
          )
        ).pipe(Effect.provide(Layer.succeed(Disk, disk.service)))
      )
      if (r._tag === "Right") ok++
      else {
        assert.strictEqual(r.left._tag, "IndexCorrupt")
        corrupt++
      }
    }
    disk.setFaults(undefined)
    await withIndex(disk, { ...config, verifyOnOpen: true }, (index) => checkAll(index, model, STREAMS, hash))
    assert.isAbove(ok, 0)
    assert.strictEqual(ok + corrupt, 20)
  })
})

describe("TableIndex concurrency", () => {
  it("reads stay correct while tables are merged away under them", async () => {
    const disk = new MemoryDisk()
    const service = yieldy(disk.service)
    const hash = weakHash(2)
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const index = yield* open({
            dir: DIR,
            memtableMaxEntries: 5,
            entriesPerBlock: 2,
            hash,
            autoMerge: false,
            blockCacheBytes: 96
          })
          const model = new Model()
          const last = new Map<string, number>()
          const pos = { at: 0 }
          for (let k = 0; k < 40; k++) {
            const entries = makeBatch(
              model,
              last,
              [
                [k % STREAMS.length, 3],
                [(k * 3) % STREAMS.length, 3]
              ],
              0,
              pos
            )
            model.add(entries, pos.at)
            index.addBatch(entries, pos.at)
          }
          yield* index.flush
          const tablesBefore = index.stats().tables
          assert.isAbove(tablesBefore, 4)
          const reads = Effect.all(
            Array.from({ length: 12 }, () => checkAll(index, model, STREAMS, hash)),
            { concurrency: "unbounded" }
          )
          yield* Effect.all([reads, index.mergeAll, reads], { concurrency: "unbounded" })
          assert.strictEqual(index.stats().tables, 1)
          yield* checkAll(index, model, STREAMS, hash)
          assert.strictEqual(disk.files().filter((f) => f.endsWith(".vtable")).length, 1)
        })
      ).pipe(Effect.provide(Layer.succeed(Disk, service)))
    )
  })
})
