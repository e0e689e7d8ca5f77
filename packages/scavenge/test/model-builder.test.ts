/**
 * The test-log builder lays records out as Vellum's writer does: framed lengths, one call per write unit
 * never straddling a chunk, a scavenge point closing its chunk.
 */
import { describe, expect, it } from "vitest"
import {
  ByteWriter,
  decodeRecord,
  DeletedStreamNumber,
  encodeRecord,
  EventFlags,
  framedLength,
  RecordKind,
  type EventRecord,
  type LogRecord
} from "@vellum/storage"
import { LogBuilder } from "./model/index.js"

const CHUNK = 1024

/** Encodes one record into a buffer of exactly its framed length. */
const encode = (record: LogRecord): Buffer => {
  const size = framedLength(record)
  const out = new ByteWriter(size)
  encodeRecord(out, record, record.logPosition)
  expect(out.length).toBe(size)
  return out.toBuffer()
}

describe("LogBuilder", () => {
  it("gives each record the position the writer would, and the records round-trip through the codec", () => {
    const log = new LogBuilder({ chunkSize: CHUNK, startMicros: 5 })
    log.epoch()
    log.append("s", 3)
    log.metadata("s", { $maxCount: 1 })
    log.tombstone("s")
    let expected = 0
    for (const record of log.records) {
      expect(record.logPosition).toBe(expected)
      expected += framedLength(record)
      const bytes = encode(record)
      const decoded = decodeRecord(bytes, 0, bytes.length, record.logPosition)
      expect(decoded.ok && decoded.record).toEqual(record)
    }
  })

  it("numbers events per stream from 0 and flags tombstones, links and append batches", () => {
    const log = new LogBuilder({ chunkSize: CHUNK })
    log.append("s", 3)
    log.tombstone("s")
    log.link("ce", { stream: "s", eventNumber: 1 })
    const events = log.records as ReadonlyArray<EventRecord>
    expect(events.map((e) => e.eventNumber)).toEqual([0, 1, 2, DeletedStreamNumber, 0])
    expect(events[0]!.flags & EventFlags.BatchBegin).not.toBe(0)
    expect(events[1]!.flags & (EventFlags.BatchBegin | EventFlags.BatchEnd)).toBe(0)
    expect(events[2]!.flags & EventFlags.BatchEnd).not.toBe(0)
    expect(events[3]!.flags & EventFlags.Tombstone).not.toBe(0)
    expect(events[4]!.flags & EventFlags.Link).not.toBe(0)
    expect(events[4]!.data.toString()).toBe("1@s")
    expect(log.lastEventNumber("s")).toBe(2)
  })

  it("closes the chunk after a scavenge point and returns it as the model's input", () => {
    const log = new LogBuilder({ chunkSize: CHUNK, startMicros: 100 })
    log.append("s", 1)
    const sp = log.scavengePoint({ threshold: 3 })
    expect(sp).toEqual({ position: log.records[1]!.logPosition, effectiveNowMicros: 100, threshold: 3 })
    expect(log.records[1]!.kind).toBe(RecordKind.ScavengePoint)
    expect(log.event("s")).toBe(CHUNK)
  })

  it("moves a write unit that does not fit to the next chunk", () => {
    const log = new LogBuilder({ chunkSize: CHUNK })
    while (log.position + 200 < CHUNK) log.event("fill")
    const positions = log.append("s", 3)
    expect(positions[0]).toBe(CHUNK)
    expect(positions.every((p) => Math.floor(p / CHUNK) === 1)).toBe(true)
  })
})
