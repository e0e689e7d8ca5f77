import { describe, expect, it } from "vitest"
import { EventFlags, RecordKind } from "@vellum/storage"
import { SystemProjections, fromEventRecord, isSystemProjectionName } from "../src/index.js"
import { faultOf } from "./systemEvents.js"

describe("the system projections", () => {
  it("are the five, in the order the reference creates them, each configured by its default query", () => {
    expect(SystemProjections.map((p) => p.name)).toEqual([
      "$streams",
      "$stream_by_category",
      "$by_category",
      "$by_event_type",
      "$by_correlation_id"
    ])
    for (const projection of SystemProjections) expect(faultOf(projection, projection.defaultQuery)).toBe("configured")
    expect(isSystemProjectionName("$by_category")).toBe(true)
    expect(isSystemProjectionName("by_category")).toBe(false)
  })

  it("read a log record as it lies in the log, JSON flag included", () => {
    const record = {
      kind: RecordKind.Event,
      logPosition: 42,
      flags: EventFlags.Json | EventFlags.BatchBegin,
      eventNumber: 3,
      createdMicros: 7,
      eventId: "id",
      stream: "s",
      eventType: "t",
      data: Buffer.from("{}"),
      metadata: Buffer.from("")
    } as const
    expect(fromEventRecord(record)).toEqual({
      stream: "s",
      eventNumber: 3,
      eventId: "id",
      eventType: "t",
      data: record.data,
      metadata: record.metadata,
      isJson: true,
      logPosition: 42,
      createdMicros: 7
    })
    expect(fromEventRecord({ ...record, flags: EventFlags.Link }).isJson).toBe(false)
  })
})
