import { describe, expect, it } from "vitest"
import { EventIdCache } from "../src/cache/EventIdCache.js"
import { RecentEventIds } from "../src/cache/RecentEventIds.js"
import { EventFlags, RecordKind, type EventRecord } from "../src/log/records.js"
import { DeletedStreamNumber } from "../src/streams/names.js"

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const event = (n: number, eventNumber = n): EventRecord => ({
  kind: RecordKind.Event,
  logPosition: n * 100,
  flags: EventFlags.Json,
  eventNumber,
  createdMicros: 0,
  eventId: uuid(n),
  stream: `s-${n}`,
  eventType: "T",
  data: Buffer.alloc(0),
  metadata: Buffer.alloc(0)
})

describe("RecentEventIds", () => {
  it("takes the replay's newest ids, then older ones read backwards only while the window has room", () => {
    const recent = new RecentEventIds(5)
    for (const n of [10, 11, 12]) recent.forward(event(n))
    recent.forward(event(13, DeletedStreamNumber))
    expect(recent.missing).toBe(2)
    for (const n of [9, 8, 7, 6]) recent.backward(event(n))
    expect(recent.missing).toBe(0)
    const cache = new EventIdCache(1000)
    recent.fillInto(cache)
    expect([6, 7, 8, 9, 10, 11, 12, 13].map((n) => cache.get(uuid(n))?.eventNumber)).toEqual([
      undefined,
      undefined,
      8,
      9,
      10,
      11,
      12,
      undefined
    ])
  })

  it("a replay longer than the window keeps its newest ids and wants none from before", () => {
    const recent = new RecentEventIds(3)
    for (let n = 1; n <= 10; n++) recent.forward(event(n))
    expect(recent.missing).toBe(0)
    const cache = new EventIdCache(1000)
    recent.fillInto(cache)
    expect([7, 8, 9, 10].map((n) => cache.get(uuid(n)) !== undefined)).toEqual([false, true, true, true])
  })

  it("filling a cache with its window leaves every one of those ids in it", () => {
    for (const capacity of [1, 2, 7, 8, 1000]) {
      const cache = new EventIdCache(capacity)
      const recent = new RecentEventIds(cache.window)
      for (let n = 1; n <= cache.window + 5; n++) recent.forward(event(n))
      recent.fillInto(cache)
      for (let n = 6; n <= cache.window + 5; n++)
        expect(cache.get(uuid(n))?.eventNumber, `capacity ${capacity}, id ${n}`).toBe(n)
    }
  })
})
