// What one append of the output writer carries: whole items, bounded by events and by bytes (an append is one
// unit of the log and must fit in a chunk), an item too large alone still going alone.
import { describe, expect, it } from "vitest"
import type { EmittedWrite, QueuedItemForTest } from "./outputBatchSupport.js"
import { approximateBytes, nextBatch } from "../src/engine/output/streamLane.js"

const write = (data: string): EmittedWrite => ({ stream: "s", eventType: "E", isJson: true, data, extraMetadata: [] })

const item = (seq: number, writes: ReadonlyArray<EmittedWrite>): QueuedItemForTest => ({
  seq,
  cause: { tag: { kind: "position", phase: 0, commit: seq, prepare: seq }, eventId: "", correlationId: undefined },
  writes
})

const batchOf = (queue: ReadonlyArray<QueuedItemForTest>, maxLength: number, maxBytes: number) =>
  nextBatch(
    queue,
    maxLength,
    maxBytes,
    () => true,
    (i) => i.writes
  ).map((b) => b.item.seq)

describe("the output writer's appends", () => {
  const small = (seq: number) => item(seq, [write("x".repeat(100))])
  const size = approximateBytes(write("x".repeat(100)))

  it("carry whole items up to the byte budget", () => {
    expect(batchOf([small(1), small(2), small(3)], 0, 2 * size)).toEqual([1, 2])
    expect(batchOf([small(1), small(2), small(3)], 0, 3 * size)).toEqual([1, 2, 3])
  })

  it("carry an item larger than the budget alone, never split", () => {
    const large = item(1, [write("y".repeat(5000)), write("z".repeat(5000))])
    expect(batchOf([large, small(2)], 0, 1000)).toEqual([1])
  })

  it("stop at the event count too", () => {
    expect(batchOf([small(1), small(2), small(3)], 2, 1_000_000)).toEqual([1, 2])
  })
})
