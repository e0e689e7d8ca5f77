/**
 * The reference model across runs and thresholds: monotonic discard points and Spent streams,
 * accumulation once per chunk, carried weights and the threshold, and
 * unsafeIgnoreHardDeletes on a later run.
 */
import { describe, expect, it } from "vitest"
import { DeletedStreamNumber } from "@vellum/storage"
import {
  executeWithThreshold,
  keptEventNumbers,
  keptWithThreshold,
  indexedEventNumbers,
  LogBuilder,
  scavengeModel,
  type ModelInput,
  type ModelOutput,
  type ModelState,
  type ScavengePointSpec
} from "./model/index.js"

const CHUNK = 4096
const DAY = 86_400_000_000
const NOW = Date.UTC(2022, 0, 5) * 1000
const MAX_AGE = 2 * 86_400

const newLog = () => new LogBuilder({ chunkSize: CHUNK, startMicros: NOW - DAY })
const input = (log: LogBuilder, scavengePoint: ScavengePointSpec, prior?: ModelState, unsafe = false): ModelInput => ({
  records: [...log.records],
  chunkSize: CHUNK,
  scavengePoint,
  prior,
  unsafeIgnoreHardDeletes: unsafe
})
const inLog = (log: LogBuilder, kept: ReadonlySet<number>, stream: string) =>
  keptEventNumbers(log.records, kept, stream)
const inIndex = (log: LogBuilder, out: ModelOutput, stream: string) =>
  indexedEventNumbers(log.records, out.keptInIndex, stream)
const sp = (log: LogBuilder, threshold = 0, effectiveNowMicros = NOW) =>
  log.scavengePoint({ effectiveNowMicros, threshold })

describe("scavenge model: later runs", () => {
  it("discard points never move back when the metadata is relaxed on the second run", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 1 })
    log.append("s", 4)
    const first = scavengeModel(input(log, sp(log)))
    expect(first.state.originals.get("s")?.discardPoint).toBe(3)
    log.metadata("s", { $maxCount: 10 })
    log.append("s", 1)
    const second = scavengeModel(input(log, sp(log), first.state))
    expect(second.state.originals.get("s")?.discardPoint).toBe(3)
    expect(inLog(log, second.keptInLog, "s")).toEqual([3, 4])
    expect(inIndex(log, second, "s")).toEqual([3, 4])
    expect(inLog(log, second.keptInLog, "$$s")).toEqual([1])
  })

  it("the maybe point never moves back either, and records removed earlier stay removed", () => {
    const log = newLog()
    log.metadata("s", { $maxAge: MAX_AGE })
    log.event("s", { createdMicros: NOW - 3 * DAY })
    log.event("s", { createdMicros: NOW - DAY })
    log.completeChunk()
    log.append("s", 1)
    const first = scavengeModel(input(log, sp(log)))
    expect(first.state.originals.get("s")).toMatchObject({ discardPoint: 0, maybeDiscardPoint: 2 })
    expect(inLog(log, first.keptInLog, "s")).toEqual([1, 2])
    log.metadata("s", { $maxAge: 2 * MAX_AGE }) // now nothing before the SP is older than the cutoff
    const second = scavengeModel(input(log, sp(log), first.state))
    expect(second.state.originals.get("s")).toMatchObject({ discardPoint: 0, maybeDiscardPoint: 2 })
    expect(inLog(log, second.keptInLog, "s")).toEqual([1, 2])
    expect(Object.fromEntries(second.weights)).toEqual({ 0: 2 }) // only the replaced metadata record
  })

  it("soft delete, then recreate: the old events go, the new ones stay", () => {
    const log = newLog()
    log.append("s", 4)
    log.softDelete("s")
    const first = scavengeModel(input(log, sp(log)))
    expect(inLog(log, first.keptInLog, "s")).toEqual([3])
    // The writer recreates a soft-deleted stream by rewriting $tb to the next event number.
    log.metadata("s", { $tb: 4 })
    log.append("s", 2)
    const second = scavengeModel(input(log, sp(log), first.state))
    expect(inLog(log, second.keptInLog, "s")).toEqual([4, 5])
    expect(inIndex(log, second, "s")).toEqual([4, 5])
    expect(inLog(log, second.keptInLog, "$$s")).toEqual([1])
    expect(second.state.originals.get("s")?.status).toBe("Spent")
  })

  it("a Spent stream is not recalculated until new metadata or a tombstone arrives", () => {
    const log = newLog()
    log.append("s", 4)
    log.softDelete("s")
    const first = scavengeModel(input(log, sp(log)))
    log.append("s", 2) // no new metadata: the stream stays Spent, its discard point stays at 3
    const second = scavengeModel(input(log, sp(log), first.state))
    expect(inLog(log, second.keptInLog, "s")).toEqual([3, 4, 5])
    expect(second.weights.size).toBe(0)
  })

  it("accumulates each chunk once: weights of the first run's metadata are not added again", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 5 })
    log.metadata("s", { $maxCount: 5 })
    const first = scavengeModel(input(log, sp(log)))
    expect(Object.fromEntries(first.weights)).toEqual({ 0: 2 })
    log.append("other", 1)
    const second = scavengeModel(input(log, sp(log), first.state))
    expect(second.weights.size).toBe(0)
  })

  it("running the same scavenge point twice changes nothing", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 2 })
    log.append("s", 5)
    log.tombstone("t")
    const point = sp(log)
    const first = scavengeModel(input(log, point))
    const second = scavengeModel(input(log, point, first.state))
    expect(second.keptInLog).toEqual(first.keptInLog)
    expect(second.keptInIndex).toEqual(first.keptInIndex)
    expect(second.state.originals).toEqual(first.state.originals)
  })

  it("maybe-discards weigh again on every run (their index entries stay)", () => {
    const log = newLog()
    log.metadata("s", { $maxAge: MAX_AGE })
    log.event("s", { createdMicros: NOW - 3 * DAY })
    log.event("s", { createdMicros: NOW - DAY })
    log.completeChunk()
    log.append("s", 1)
    const first = scavengeModel(input(log, sp(log)))
    expect(Object.fromEntries(first.weights)).toEqual({ 0: 2 })
    log.append("other", 1)
    const second = scavengeModel(input(log, sp(log), first.state))
    expect(Object.fromEntries(second.weights)).toEqual({ 0: 2 })
    expect(inLog(log, second.keptInLog, "s")).toEqual([1, 2])
  })

  it("a chunk without a stored timestamp range counts as already discarded", () => {
    const log = newLog()
    log.append("s", 3, { createdMicros: NOW })
    log.completeChunk()
    log.metadata("s", { $maxAge: MAX_AGE })
    log.append("s", 1)
    // As if chunk 0 had been accumulated (empty, by an older scavenger) before an earlier SP.
    const prior: ModelState = {
      scavengePointPosition: CHUNK - 1,
      originals: new Map(),
      metastreams: new Map(),
      chunkTimeRanges: new Map(),
      pendingWeights: new Map(),
      removedFromLog: new Set(),
      removedFromIndex: new Set()
    }
    const out = scavengeModel(input(log, sp(log), prior))
    expect(out.state.originals.get("s")?.discardPoint).toBe(3)
    expect(out.weights.size).toBe(0)
  })
})

describe("scavenge model: threshold", () => {
  const twoChunks = () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 1 })
    log.append("s", 1) // chunk 0: event 0 goes (weight 2)
    log.completeChunk()
    log.append("s", 4) // chunk 1: events 1..3 go (weight 6), 4 stays
    const point = sp(log, 2)
    return { log, point, out: scavengeModel(input(log, point)) }
  }

  it("executes a chunk only when its weight is strictly greater than the threshold", () => {
    const { log, point, out } = twoChunks()
    expect(Object.fromEntries(out.weights)).toEqual({ 0: 2, 1: 6 })
    expect(inLog(log, keptWithThreshold(input(log, point), out, 2), "s")).toEqual([0, 4])
    expect(inLog(log, keptWithThreshold(input(log, point), out, 1), "s")).toEqual([4])
    expect(inLog(log, keptWithThreshold(input(log, point), out, 6), "s")).toEqual([0, 1, 2, 3, 4])
    expect(inLog(log, keptWithThreshold(input(log, point), out, -1), "s")).toEqual([4])
    expect(inIndex(log, out, "s")).toEqual([4]) // the index ignores the threshold
  })

  it("weights of skipped chunks carry over and add up on the next run", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 2 })
    log.append("s", 3) // chunk 0
    log.completeChunk()
    const point1 = sp(log, 3)
    const in1 = input(log, point1)
    const run1 = executeWithThreshold(in1, scavengeModel(in1))
    expect(inLog(log, run1.keptInLog, "s")).toEqual([0, 1, 2]) // weight 2, not > 3
    expect(Object.fromEntries(run1.state.pendingWeights)).toEqual({ 0: 2 })
    log.append("s", 1)
    const point2 = sp(log, 3)
    const in2 = input(log, point2, run1.state)
    const run2 = executeWithThreshold(in2, scavengeModel(in2))
    expect(inLog(log, run2.keptInLog, "s")).toEqual([2, 3]) // 2 carried + 2 new > 3
    expect(run2.state.pendingWeights.has(0)).toBe(false)
  })

  it("unsafeIgnoreHardDeletes executes every chunk whatever the threshold", () => {
    const log = newLog()
    log.append("s", 1)
    log.tombstone("s")
    const point = sp(log, 1000)
    const unsafe = input(log, point, undefined, true)
    expect(inLog(log, keptWithThreshold(unsafe, scavengeModel(unsafe), 1000), "s")).toEqual([])
  })

  it("tombstone, normal scavenge, then unsafeIgnoreHardDeletes removes the tombstone later", () => {
    const log = newLog()
    log.append("s", 2)
    log.tombstone("s")
    const first = scavengeModel(input(log, sp(log)))
    expect(inLog(log, first.keptInLog, "s")).toEqual([DeletedStreamNumber])
    log.append("other", 1)
    const second = scavengeModel(input(log, sp(log), first.state, true))
    expect(inLog(log, second.keptInLog, "s")).toEqual([])
    expect(inIndex(log, second, "s")).toEqual([])
    expect(inLog(log, second.keptInLog, "other")).toEqual([0])
  })
})
