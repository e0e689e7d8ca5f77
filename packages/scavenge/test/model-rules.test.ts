/**
 * The reference model, one run at a time: the scope rules, the consequences of
 * the discard points, the chunk-executor rule, the index rule and the weight examples.
 */
import { describe, expect, it } from "vitest"
import { DeletedStreamNumber, RecordKind, type LogRecord } from "@vellum/storage"
import {
  indexedEventNumbers,
  keptEventNumbers,
  LogBuilder,
  scavengeModel,
  type ModelInput,
  type ModelOutput,
  type ScavengePointSpec
} from "./model/index.js"

const CHUNK = 4096
const DAY = 86_400_000_000
const NOW = Date.UTC(2022, 0, 5) * 1000
const EXPIRED = NOW - 3 * DAY
const ACTIVE = NOW - DAY
const MAX_AGE = 2 * 86_400 // seconds
const CUTOFF = NOW - MAX_AGE * 1_000_000

const newLog = () => new LogBuilder({ chunkSize: CHUNK, startMicros: ACTIVE })
const run = (log: LogBuilder, scavengePoint: ScavengePointSpec, extra: Partial<ModelInput> = {}): ModelOutput =>
  scavengeModel({ records: log.records, chunkSize: CHUNK, scavengePoint, ...extra })
const inLog = (log: LogBuilder, out: ModelOutput, stream: string) =>
  keptEventNumbers(log.records, out.keptInLog, stream)
const inIndex = (log: LogBuilder, out: ModelOutput, stream: string) =>
  indexedEventNumbers(log.records, out.keptInIndex, stream)
const weights = (out: ModelOutput) => Object.fromEntries(out.weights)
const chunkNow = (log: LogBuilder) => Math.floor(log.position / CHUNK)
const sp = (log: LogBuilder) => log.scavengePoint({ effectiveNowMicros: NOW })

describe("scavenge model: scope", () => {
  it("never touches a stream with neither metadata nor a tombstone", () => {
    const log = newLog()
    log.append("plain", 5)
    const out = run(log, sp(log))
    expect(inLog(log, out, "plain")).toEqual([0, 1, 2, 3, 4])
    expect(inIndex(log, out, "plain")).toEqual([0, 1, 2, 3, 4])
    expect(out.weights.size).toBe(0)
  })

  it("keeps the last event BEFORE the SP, and everything after the SP (keep-last-event)", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 1 })
    log.append("s", 10)
    const point = sp(log)
    log.append("s", 1) // event 10, after the SP
    const out = run(log, point)
    expect(inLog(log, out, "s")).toEqual([9, 10])
    expect(inIndex(log, out, "s")).toEqual([9, 10])
  })

  it("leaves records after the SP alone even in a tombstoned stream", () => {
    const log = newLog()
    log.append("s", 2)
    log.tombstone("s")
    const point = sp(log)
    log.metadata("s", { $maxCount: 1 }) // after the SP: not accumulated, not removed
    const out = run(log, point)
    expect(inLog(log, out, "s")).toEqual([DeletedStreamNumber])
    expect(inLog(log, out, "$$s")).toEqual([0])
  })

  it("always keeps non-event records (epochs, commits, scavenge points)", () => {
    const log = newLog()
    log.epoch()
    log.append("s", 2)
    log.commit()
    log.tombstone("s")
    const point = sp(log)
    const out = run(log, point, { unsafeIgnoreHardDeletes: true })
    const others = log.records.filter((r: LogRecord) => r.kind !== RecordKind.Event).map((r) => r.logPosition)
    expect(others).toHaveLength(3)
    for (const position of others) expect(out.keptInLog.has(position)).toBe(true)
    expect(inLog(log, out, "s")).toEqual([])
  })
})

describe("scavenge model: consequences of the discard points", () => {
  it("hard delete: every event but the tombstone goes; the metastream goes wholly", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 100 })
    log.append("s", 3)
    log.tombstone("s")
    const out = run(log, sp(log))
    expect(inLog(log, out, "s")).toEqual([DeletedStreamNumber])
    expect(inLog(log, out, "$$s")).toEqual([])
    expect(inIndex(log, out, "s")).toEqual([DeletedStreamNumber])
    expect(inIndex(log, out, "$$s")).toEqual([])
    expect(out.state.originals.get("s")?.status).toBe("Archived")
    // +2 per discarded event, +2 for the last metadata record of a tombstoned stream.
    expect(weights(out)).toEqual({ 0: 8 })
  })

  it("soft delete ($tb = long.MaxValue): everything but the last event goes and the stream is Spent", () => {
    const log = newLog()
    log.append("s", 4)
    log.softDelete("s")
    const out = run(log, sp(log))
    expect(inLog(log, out, "s")).toEqual([3])
    expect(inIndex(log, out, "s")).toEqual([3])
    expect(out.state.originals.get("s")).toMatchObject({ discardPoint: 3, status: "Spent" })
  })

  it("$tb = n beyond the last event: like a soft delete, but the stream stays Active", () => {
    const log = newLog()
    log.append("s", 4)
    log.metadata("s", { $tb: 10 })
    const out = run(log, sp(log))
    expect(inLog(log, out, "s")).toEqual([3])
    expect(out.state.originals.get("s")?.status).toBe("Active")
  })

  it("$tb = n within the stream: events below n go", () => {
    const log = newLog()
    log.append("s", 5)
    log.metadata("s", { $tb: 2 })
    const out = run(log, sp(log))
    expect(inLog(log, out, "s")).toEqual([2, 3, 4])
    expect(out.state.originals.get("s")?.status).toBe("Spent")
  })

  it("$maxCount = k: events ≤ last − k go", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 3 })
    log.append("s", 7)
    const out = run(log, sp(log))
    expect(inLog(log, out, "s")).toEqual([4, 5, 6])
    expect(inIndex(log, out, "s")).toEqual([4, 5, 6])
  })

  it("several limits at once: the largest prefix wins", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 5, $tb: 4 })
    log.append("s", 7)
    expect(inLog(log, run(log, sp(log)), "s")).toEqual([4, 5, 6])
    const other = newLog()
    other.metadata("s", { $maxCount: 2, $tb: 1 })
    other.append("s", 7)
    expect(inLog(other, run(other, sp(other)), "s")).toEqual([5, 6])
  })

  it("$maxAge: a chunk wholly older than the cutoff is a definite discard", () => {
    const log = newLog()
    log.metadata("s", { $maxAge: MAX_AGE }, { createdMicros: EXPIRED })
    log.append("s", 2, { createdMicros: EXPIRED })
    log.completeChunk()
    log.append("s", 2, { createdMicros: EXPIRED }) // chunk 1, but the last event (3) is kept
    log.append("s", 1)
    const out = run(log, sp(log))
    expect(inLog(log, out, "s")).toEqual([4])
    expect(inIndex(log, out, "s")).toEqual([2, 3, 4]) // chunk 1 holds an active record: 2 and 3 only "maybe"
    expect(weights(out)).toEqual({ 0: 4, 1: 2 })
    expect(out.state.originals.get("s")).toMatchObject({ discardPoint: 2, maybeDiscardPoint: 4 })
  })

  it("$maxAge: the mixed-chunk example weighs 3 and is judged per record (holes allowed)", () => {
    const log = newLog()
    log.metadata("s", { $maxAge: MAX_AGE })
    log.event("s", { createdMicros: EXPIRED })
    log.event("s", { createdMicros: ACTIVE })
    log.event("s", { createdMicros: EXPIRED })
    log.completeChunk()
    log.event("s", { createdMicros: ACTIVE })
    const out = run(log, sp(log))
    expect(weights(out)).toEqual({ 0: 3 })
    expect(inLog(log, out, "s")).toEqual([1, 3])
    expect(inIndex(log, out, "s")).toEqual([0, 1, 2, 3]) // maybe-expired entries stay in the index
  })

  it("$maxAge: a record exactly at the cutoff is kept, one microsecond older goes", () => {
    const log = newLog()
    log.metadata("s", { $maxAge: MAX_AGE })
    log.event("s", { createdMicros: CUTOFF - 1 })
    log.event("s", { createdMicros: CUTOFF })
    log.event("s", { createdMicros: CUTOFF - 1 })
    log.append("s", 1)
    const out = run(log, sp(log))
    expect(inLog(log, out, "s")).toEqual([1, 3])
  })

  it("$maxAge: a chunk whose oldest record is exactly at the cutoff is kept without weight", () => {
    const log = newLog()
    log.metadata("s", { $maxAge: MAX_AGE }, { createdMicros: CUTOFF })
    log.append("s", 3, { createdMicros: CUTOFF })
    const point = log.scavengePoint({ effectiveNowMicros: NOW, timeMicros: CUTOFF })
    const out = run(log, point)
    expect(inLog(log, out, "s")).toEqual([0, 1, 2])
    expect(out.weights.size).toBe(0)
  })
})

describe("scavenge model: metastreams", () => {
  it("only the latest metadata record survives; replacing across chunks weighs 2 on the old chunk", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 10 })
    log.completeChunk()
    log.metadata("s", { $maxCount: 20 })
    const out = run(log, sp(log))
    expect(weights(out)).toEqual({ 0: 2 })
    expect(inLog(log, out, "$$s")).toEqual([1])
    expect(inIndex(log, out, "$$s")).toEqual([1])
    expect(out.state.originals.get("s")?.limits).toEqual({ maxCount: 20 })
  })

  it("$maxCount:1 over 3 events in one chunk weighs 4", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 1 })
    log.completeChunk()
    const chunk = chunkNow(log)
    log.append("s", 3)
    const out = run(log, sp(log))
    expect(weights(out)).toEqual({ [chunk]: 4 })
  })

  it("out-of-order metadata is ignored and weighs 2 on its own chunk", () => {
    const log = newLog()
    log.append("s", 5)
    log.metadata("s", { $maxCount: 1 }, { eventNumber: 1 })
    log.completeChunk()
    log.metadata("s", { $maxCount: 4 }, { eventNumber: 0 }) // lower number, later position
    const out = run(log, sp(log))
    expect(out.state.originals.get("s")?.limits).toEqual({ maxCount: 1 })
    expect(inLog(log, out, "s")).toEqual([4])
    expect(inLog(log, out, "$$s")).toEqual([1])
    expect(weights(out)).toEqual({ 0: 8, 1: 2 })
  })

  it("unparseable metadata (any event type, binary data) clears the limits", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 1 })
    log.append("s", 3)
    log.event("$$s", { type: "sneaky", data: Buffer.from([0xde, 0xad]), isJson: false })
    const out = run(log, sp(log))
    expect(out.state.originals.get("s")).toMatchObject({ limits: {}, status: "Spent" })
    expect(inLog(log, out, "s")).toEqual([0, 1, 2])
    expect(inLog(log, out, "$$s")).toEqual([1])
  })

  it("metadata of a metastream ($$$$s) keeps only its latest record and does not change $$s", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 5 })
    log.metadata("s", { $maxCount: 6 })
    log.metadata("$$s", { $maxCount: 100 })
    log.metadata("$$s", { $maxCount: 100 })
    const out = run(log, sp(log))
    expect(inLog(log, out, "$$$$s")).toEqual([1])
    expect(inLog(log, out, "$$s")).toEqual([1])
    expect(out.state.originals.has("$$s")).toBe(false)
  })

  it("a tombstone adds 2 on the chunk of the last metadata record", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 5 })
    log.completeChunk()
    log.tombstone("s")
    const out = run(log, sp(log))
    expect(weights(out)).toEqual({ 0: 2 })
    expect(inLog(log, out, "$$s")).toEqual([])
  })
})

describe("scavenge model: links and unsafeIgnoreHardDeletes", () => {
  it("links are ordinary events: never followed, trimmed only by their own stream's limits", () => {
    const log = newLog()
    log.append("target", 3)
    log.link("ce", { stream: "target", eventNumber: 0 })
    log.link("ce", { stream: "target", eventNumber: 1 })
    log.metadata("target", { $maxCount: 1 })
    log.link("limited", { stream: "target", eventNumber: 0 })
    log.link("limited", { stream: "target", eventNumber: 1 })
    log.metadata("limited", { $maxCount: 1 })
    const out = run(log, sp(log))
    expect(inLog(log, out, "target")).toEqual([2])
    expect(inLog(log, out, "ce")).toEqual([0, 1])
    expect(inLog(log, out, "limited")).toEqual([1])
  })

  it("unsafeIgnoreHardDeletes removes the tombstone, the events and the metastream, in log and index", () => {
    const log = newLog()
    log.metadata("s", { $maxCount: 10 })
    log.append("s", 2)
    log.tombstone("s")
    log.append("other", 1)
    const out = run(log, sp(log), { unsafeIgnoreHardDeletes: true })
    for (const stream of ["s", "$$s"]) {
      expect(inLog(log, out, stream)).toEqual([])
      expect(inIndex(log, out, stream)).toEqual([])
    }
    expect(inLog(log, out, "other")).toEqual([0])
  })
})
