import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { Disk, DiskError, gateDisk, MemoryDisk, Prng, type DiskService } from "@vellum/platform"
import type { NewIndexEntry } from "../src/tableindex/Entry.js"
import { open, type TableIndex, type TableIndexConfig } from "../src/tableindex/TableIndex.js"

// Five tables of four entries (autoMerge off): table j holds entries 4j .. 4j+3. Entry k is event
// ⌊k / 5⌋ of STREAMS[k % 5] at position 10k. The scavenge drops every third entry of tables 0..2,
// empties table 3 and leaves table 4 as it is, so every kind of switch is crashed or interrupted.
const STREAMS = ["alpha", "beta", "gamma", "delta", "$$alpha"]
const DIR = "/db/index"
const TABLES = 5
const PER_TABLE = 4
const entry = (k: number): NewIndexEntry => ({
  stream: STREAMS[k % STREAMS.length]!,
  eventNumber: Math.floor(k / STREAMS.length),
  position: k * 10
})
const kept = (k: number) => k >= 16 || (k < 12 && k % 3 !== 0)
const keep = (_hi: number, _lo: number, _en: number, position: number) => kept(position / 10)
/** Table 4 keeps everything, so it reads the same old or new. */
const ALL_NEW = ["new", "new", "new", "new", "new"]
const config: TableIndexConfig = {
  dir: DIR,
  memtableMaxEntries: PER_TABLE,
  autoMerge: false,
  entriesPerBlock: 2,
  ioChunkBytes: 48
}

const openIn = (service: DiskService, cfg: TableIndexConfig = config) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const index = yield* open(cfg).pipe(Scope.extend(scope), Effect.provide(Layer.succeed(Disk, service)))
    return { index, scope }
  })

/** A disk holding the five tables, flushed. */
const setup = Effect.gen(function* () {
  const disk = new MemoryDisk()
  const { index, scope } = yield* openIn(disk.service)
  for (let k = 0; k < TABLES * PER_TABLE; k++) index.addBatch([entry(k)], k * 10 + 1)
  yield* index.flush
  yield* Scope.close(scope, Exit.void)
  return disk
})

/** The entries the index returns, by number. */
const entriesOf = (index: TableIndex) =>
  Effect.gen(function* () {
    const found = new Set<number>()
    for (const s of STREAMS)
      for (const e of yield* index.range(s, 0, Number.MAX_SAFE_INTEGER)) found.add(e.position / 10)
    return found
  })

/** Each table's entries are all there (old) or exactly the kept ones (new); returns which tables are new. */
const tableStates = (index: TableIndex, disk: MemoryDisk) =>
  Effect.gen(function* () {
    const found = yield* entriesOf(index)
    const names = disk.files().filter((f) => f.startsWith(`${DIR}/`) && !f.endsWith("indexmap"))
    assert.strictEqual(names.length, index.stats().tables, `leftover files: ${names.join(",")}`)
    assert.strictEqual(index.persistedPosition, TABLES * PER_TABLE * 10 - 9)
    return Array.from({ length: TABLES }, (_, j) => {
      const ks = Array.from({ length: PER_TABLE }, (_, i) => j * PER_TABLE + i)
      const have = ks.filter((k) => found.has(k))
      if (have.length === ks.length && ks.some((k) => !kept(k))) return "old"
      assert.deepStrictEqual(have, ks.filter(kept), `table ${j} is neither old nor new`)
      return "new"
    })
  })

/** Counts the Disk operations made while `armed`, and at the `crashAt`-th crashes the disk: every later one fails. */
const crashing = (disk: MemoryDisk, crashAt: number, prng: Prng, mode: "random" | "strict") => {
  const state = { armed: false, ops: 0, crashed: false }
  const gate = <A, E>(e: Effect.Effect<A, E>): Effect.Effect<A, E | DiskError> =>
    Effect.suspend((): Effect.Effect<A, E | DiskError> => {
      if (state.armed && !state.crashed && state.ops++ === crashAt) {
        state.crashed = true
        disk.crash(prng, mode)
      }
      return state.crashed
        ? Effect.fail(new DiskError({ reason: "IOError", op: "crashed", path: "", message: "the node crashed" }))
        : e
    })
  const service = gateDisk(disk.service, gate)
  return { service, state }
}

/** Runs the scavenge over `service` (the gate armed for it only); the scope closes whatever happened. */
const scavengeOn = (service: DiskService, state: { armed: boolean }) =>
  Effect.gen(function* () {
    const { index, scope } = yield* openIn(service)
    state.armed = true
    const result = yield* Effect.either(index.scavenge(keep, () => Effect.void))
    yield* Scope.close(scope, Exit.void)
    return result
  })

describe("TableIndex.scavenge crash safety", () => {
  it.effect(
    "a crash at any Disk operation of a scavenge, or after it, leaves each table old or new",
    () =>
      Effect.gen(function* () {
        const dry = crashing(yield* setup, Number.POSITIVE_INFINITY, new Prng(0), "strict")
        const done = yield* scavengeOn(dry.service, dry.state)
        assert.strictEqual(done._tag, "Right")
        assert.isAbove(dry.state.ops, 40)
        const seen = new Set<string>()
        for (let crashAt = 0; crashAt <= dry.state.ops; crashAt++) {
          for (const [seed, mode] of [
            [1, "strict"],
            [2, "random"]
          ] as const) {
            const disk = yield* setup
            const { service, state } = crashing(disk, crashAt, new Prng(seed * 1000 + crashAt), mode)
            yield* scavengeOn(service, state)
            if (!state.crashed) disk.crash(new Prng(seed), mode)
            const { index, scope } = yield* openIn(disk.service, { ...config, verifyOnOpen: true })
            const states = yield* tableStates(index, disk)
            seen.add(states.join(","))
            if (crashAt === dry.state.ops) assert.deepStrictEqual(states, ALL_NEW, `after the scavenge (${mode})`)
            // The survivor scavenges to the same end.
            yield* index.scavenge(keep, () => Effect.void)
            assert.deepStrictEqual(yield* tableStates(index, disk), ALL_NEW)
            yield* Scope.close(scope, Exit.void)
          }
        }
        // Crashes land between every pair of switches.
        for (let j = 0; j <= 4; j++) {
          const state = Array.from({ length: TABLES }, (_, i) => (i < j || i === 4 ? "new" : "old")).join(",")
          assert.isTrue(seen.has(state), `never saw ${state}: ${[...seen].join(" | ")}`)
        }
      }),
    60_000
  )

  it.effect("interrupting after the first table leaves it new and the rest old, in memory and after a reopen", () =>
    Effect.gen(function* () {
      const disk = yield* setup
      const { index, scope } = yield* openIn(disk.service)
      let reports = 0
      const exit = yield* Effect.exit(index.scavenge(keep, () => (reports++ === 0 ? Effect.interrupt : Effect.void)))
      assert.isTrue(Exit.isInterrupted(exit))
      assert.strictEqual(reports, 1)
      assert.deepStrictEqual(yield* tableStates(index, disk), ["new", "old", "old", "old", "new"])
      // Merges are no longer held back.
      yield* index.mergeAll
      assert.strictEqual(index.stats().tables, 1)
      yield* Scope.close(scope, Exit.void)
      const again = yield* openIn(disk.service, { ...config, verifyOnOpen: true })
      assert.deepStrictEqual(yield* tableStates(again.index, disk), ["new", "old", "old", "old", "new"])
      yield* Scope.close(again.scope, Exit.void)
    })
  )

  it.effect(
    "interrupting the scavenge fiber at any point leaves a consistent index and no stray file",
    () =>
      Effect.gen(function* () {
        const outcomes = new Set<string>()
        for (let yields = 0; yields < 120; yields++) {
          const disk = yield* setup
          const { index, scope } = yield* openIn(yieldy(disk.service))
          const fiber = yield* Effect.fork(index.scavenge(keep, () => Effect.void))
          for (let i = 0; i < yields; i++) yield* Effect.yieldNow()
          yield* Fiber.interrupt(fiber)
          const states = yield* tableStates(index, disk)
          outcomes.add(states.join(","))
          yield* index.scavenge(keep, () => Effect.void)
          assert.deepStrictEqual(yield* tableStates(index, disk), ALL_NEW)
          yield* Scope.close(scope, Exit.void)
          assert.strictEqual(disk.openHandleCount(), 0)
        }
        assert.isAtLeast(outcomes.size, 5, [...outcomes].join(" | "))
      }),
    60_000
  )
})

/** Wraps every Disk operation with a yield, so an interruption can land between any two of them. */
const yieldy = (inner: DiskService): DiskService => gateDisk(inner, (e) => Effect.zipRight(Effect.yieldNow(), e))
