/**
 * Planted broken invariants: the assertions at the storage protocol points fire (AssertionFailed, a
 * defect) instead of letting the broken state corrupt data silently.
 */
import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Fiber, Scope } from "effect"
import { Disk, MemoryDisk, Prng, isAssertionFailed } from "@vellum/platform"
import { EventIdCache } from "../src/cache/EventIdCache.js"
import type { TransactionLog } from "../src/log/TransactionLog.js"
import { openTransactionLog } from "../src/log/TransactionLog.js"
import { ReadIndex } from "../src/streams/ReadIndex.js"
import * as TableIndex from "../src/tableindex/TableIndex.js"
import { makeWriter, type WriteCommand } from "../src/streams/Writer.js"
import { chunkIds, eventOfSize, exitOn, logConfig, openLog } from "./log-support.js"
import { evs } from "./streams-harness.js"

/** The message of the failed assertion an exit died of (undefined when it did not die of one). */
const assertionOf = (exit: Exit.Exit<unknown, unknown>): string | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const defect = Cause.squash(exit.cause)
  return isAssertionFailed(defect) ? defect.message : undefined
}

const thrownAssertion = (f: () => void): string | undefined => {
  try {
    f()
  } catch (e) {
    return isAssertionFailed(e) ? e.message : `not an assertion: ${String(e)}`
  }
  return undefined
}

const writerConfig = { maxBatchCommands: 16, maxEventSize: 1 << 20, writeTimeoutMillis: 60_000 }

/** A log, its index and a ReadIndex over them, on a fresh MemoryDisk; `tweak` may break the log. */
const openParts = Effect.gen(function* () {
  const log = yield* openTransactionLog(logConfig(), chunkIds(1))
  const index = yield* TableIndex.open({ dir: "/db/index", memtableMaxEntries: 100 })
  return { log, index, readIndex: new ReadIndex(log, index, { streamInfoCacheCapacity: 16 }, 0) }
})

const inWorld = <A, E>(effect: Effect.Effect<A, E, Disk | Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(effect).pipe(Effect.provideService(Disk, new MemoryDisk().service)))

const append = (stream: string, count: number): WriteCommand => ({
  _tag: "Append",
  stream,
  expectedVersion: -2,
  events: evs(1, count)
})

describe("invariants: ReadIndex", () => {
  const fakeLog = (durable: number) => ({ writerPosition: () => durable }) as unknown as TransactionLog
  const fakeIndex = { addBatch: () => undefined } as unknown as TableIndex.TableIndex

  it("fires when told to move the committed position backwards", () => {
    const readIndex = new ReadIndex(fakeLog(1000), fakeIndex, { streamInfoCacheCapacity: 4 }, 500)
    readIndex.applyCommitted([], 600)
    expect(readIndex.committed()).toBe(600)
    expect(thrownAssertion(() => readIndex.applyCommitted([], 599))).toBe(
      "ReadIndex: the committed position only grows"
    )
    expect(readIndex.committed()).toBe(600)
  })

  it("fires when told to commit past the durable log", () => {
    const readIndex = new ReadIndex(fakeLog(1000), fakeIndex, { streamInfoCacheCapacity: 4 }, 0)
    readIndex.applyCommitted([], 1000)
    expect(thrownAssertion(() => readIndex.applyCommitted([], 1001))).toBe(
      "ReadIndex: the committed position never passes the durable log"
    )
    expect(readIndex.committed()).toBe(1000)
  })
})

describe("invariants: the writer", () => {
  it("writes and answers normally when nothing is broken", () =>
    inWorld(
      Effect.gen(function* () {
        const { log, readIndex } = yield* openParts
        const writer = yield* makeWriter(log, readIndex, new EventIdCache(100), writerConfig, () => Effect.void)
        yield* Effect.forkScoped(writer.loop)
        const result = yield* writer.submit(append("s", 2))
        expect(result._tag).toBe("Appended")
        expect(readIndex.committed()).toBe(log.writerPosition())
      })
    ))

  it("fires when a second round would run beside the first", () =>
    inWorld(
      Effect.gen(function* () {
        const { log, readIndex } = yield* openParts
        const writer = yield* makeWriter(log, readIndex, new EventIdCache(100), writerConfig, () => Effect.void)
        yield* Effect.forkScoped(writer.loop)
        yield* Effect.yieldNow()
        const second = yield* Effect.fork(writer.loop)
        expect(assertionOf(yield* Fiber.await(second))).toBe("Writer: one round at a time")
      })
    ))

  it("fires when the log places a round's records at positions that do not grow", () =>
    inWorld(
      Effect.gen(function* () {
        const { log, readIndex } = yield* openParts
        // A broken log: it writes the records where they belong but reports them all at position 0.
        const broken: TransactionLog = {
          ...log,
          prepare: (units) => {
            const prepared = log.prepare(units)
            return { ...prepared, positions: prepared.positions.map((unit) => unit.map(() => 0)) }
          }
        }
        const writer = yield* makeWriter(broken, readIndex, new EventIdCache(100), writerConfig, () => Effect.void)
        const loop = yield* Effect.fork(writer.loop)
        writer.enqueue(append("s", 2), () => undefined)
        expect(assertionOf(yield* Fiber.await(loop))).toBe("Writer: positions only grow")
        expect(readIndex.committed()).toBe(0)
      })
    ))
})

describe("invariants: TransactionLog", () => {
  it("fires when a batch prepared before another write is written after it (not at the end)", () => {
    const disk = new MemoryDisk().service
    const log = openLog(disk, logConfig({ chunkSize: 4096 }))
    const prng = new Prng(7)
    const stale = log.prepare([{ records: [eventOfSize(prng, 200)] }])
    const fresh = log.prepare([{ records: [eventOfSize(prng, 200)] }])
    expect(Exit.isSuccess(exitOn(disk, log.write(fresh)))).toBe(true)
    const end = log.writerPosition()
    expect(assertionOf(exitOn(disk, log.write(stale)))).toBe("TransactionLog: writes only at the end of the log")
    expect(log.writerPosition()).toBe(end)
  })
})
