import { describe, expect, it } from "vitest"
import type { CheckpointTag } from "../src/persisted/checkpointTag.js"
import {
  encodeEmittedMetadata,
  multipleProjectionsReason,
  startsNewEpoch,
  streamOwnership,
  writtenFromOutsideReason
} from "../src/persisted/emittedMetadata.js"

const causedAt: CheckpointTag = { kind: "streams", phase: 0, streams: [["account-1", 4]] }
const version = { projectionId: 3, epoch: 0, version: 2 }
const causedBy = "5a7e1a2c-1d7b-4f3e-9a44-0c3f1bb5c9d1"

describe("the stamp on an event a projection writes", () => {
  it("is the causing position with the projection's version, then $causedBy and $correlationId", () => {
    expect(encodeEmittedMetadata(causedAt, version, { causedBy, correlationId: "corr-1" })).toBe(
      `{"$v":"3:0:2:4","$s":{"account-1":4},"$causedBy":"${causedBy}","$correlationId":"corr-1"}`
    )
  })

  it("keeps the event's own metadata, its own correlation id winning and its own $causedBy dropped", () => {
    const stamp = {
      extra: [
        ["kind", '{"a":1}'],
        ["$correlationId", '"mine"'],
        ["$causedBy", '"forged"']
      ] as const,
      causedBy,
      correlationId: "corr-1"
    }
    expect(encodeEmittedMetadata(causedAt, version, stamp)).toBe(
      `{"$v":"3:0:2:4","$s":{"account-1":4},"kind":{"a":1},"$correlationId":"mine","$causedBy":"${causedBy}"}`
    )
  })

  it("leaves out an unknown cause and an empty correlation id", () => {
    expect(encodeEmittedMetadata(causedAt, version, { causedBy: "", correlationId: "" })).toBe(
      '{"$v":"3:0:2:4","$s":{"account-1":4}}'
    )
  })
})

describe("who wrote a stream's last event", () => {
  const ours = encodeEmittedMetadata(causedAt, version, { causedBy })

  it("is nobody for an empty stream, which starts anew", () => {
    expect(streamOwnership(undefined, 3)).toEqual({ kind: "new" })
    expect(startsNewEpoch(streamOwnership(undefined, 3), 0)).toBe(true)
  })

  it("is this projection when the stamp names it, continuing unless a reset began a later epoch", () => {
    const ownership = streamOwnership(ours, 3)
    expect(ownership).toEqual({ kind: "this", tag: causedAt, epoch: 0, version: 2 })
    expect(startsNewEpoch(ownership, 2)).toBe(false)
    expect(startsNewEpoch(ownership, 3)).toBe(true)
  })

  it("is this projection for a position without a stamp, as the reference assumes", () => {
    expect(streamOwnership('{"$c":1,"$p":1}', 3)).toMatchObject({ kind: "this" })
  })

  it("is another projection when the stamp names another", () => {
    expect(streamOwnership(ours, 4)).toEqual({ kind: "another", projectionId: 3 })
    expect(multipleProjectionsReason("out", 3, 4)).toBe(
      "Multiple projections emitting to the same stream detected.  Stream: 'out'. Last event projection: '3'.  Emitting projection: '4'"
    )
  })

  it("is the outside when the last event carries no position", () => {
    for (const metadata of ["", "not json", '{"$c":"x"}', "[1]"])
      expect(streamOwnership(metadata, 3), metadata).toEqual({ kind: "outside" })
    expect(writtenFromOutsideReason("out", 3)).toBe(
      "The 'out' stream managed by projection 3 has been written to from the outside."
    )
  })
})
