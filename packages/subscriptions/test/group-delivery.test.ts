import { describe, expect, it } from "vitest"
import { ev, ids, liveGroup, makeGroup, ofTag } from "./groupFixtures.js"

describe("a group's delivery", () => {
  it("hands out buffered messages in order, each once while in flight", () => {
    const group = liveGroup(4)
    expect(ids(group.pull(2, 0).messages)).toEqual(["e0", "e1"])
    expect(ids(group.pull(10, 0).messages)).toEqual(["e2", "e3", "e4"])
    expect(group.pull(10, 0).messages).toEqual([])
    expect(group.stats().outstandingMessagesCount).toBe(5)
  })

  it("gives a message whose deadline passed back with its retry count raised, before newer messages", () => {
    const group = liveGroup(3, { messageTimeoutMilliseconds: 100 })
    group.pull(2, 0)
    group.tick(99)
    expect(group.stats().retryBufferCount).toBe(0)
    group.tick(100)
    expect(group.stats().retryBufferCount).toBe(2)
    const again = group.pull(3, 100).messages
    expect(again.map((d) => [d.event.id, d.retryCount])).toEqual([
      ["e0", 1],
      ["e1", 1],
      ["e2", 0]
    ])
  })

  it("a timeout of 0 lets a message go back at the next tick", () => {
    const group = liveGroup(0, { messageTimeoutMilliseconds: 0 })
    group.pull(1, 5)
    group.tick(5)
    expect(group.pull(1, 5).messages[0]!.retryCount).toBe(1)
  })

  it("parks a message that times out after maxRetryCount retries, and finishes it once the park is durable", () => {
    const group = liveGroup(0, { messageTimeoutMilliseconds: 10, maxRetryCount: 2 })
    const counts: Array<number> = []
    let parks: ReturnType<typeof ofTag<"Park">> = []
    for (let t = 0; parks.length === 0; t += 10) {
      counts.push(...group.pull(1, t).messages.map((d) => d.retryCount))
      parks = ofTag(group.tick(t + 10), "Park")
    }
    expect(counts).toEqual([0, 1, 2])
    expect(parks.map((p) => [p.event.id, p.reason])).toEqual([["e0", "Reached retry count of 2"]])
    expect(group.stats().outstandingMessagesCount).toBe(1)
    expect(group.pull(1, 100).messages).toEqual([])
    group.parked(["e0"], 100)
    expect(group.stats()).toMatchObject({ outstandingMessagesCount: 0, parkedSinceStart: 1 })
  })

  it("maxRetryCount 0 parks at the first timeout", () => {
    const group = liveGroup(0, { messageTimeoutMilliseconds: 10, maxRetryCount: 0 })
    group.pull(1, 0)
    expect(ofTag(group.tick(10), "Park")).toHaveLength(1)
  })

  it("acks several ids at once and ignores ids not in flight", () => {
    const group = liveGroup(3, { messageTimeoutMilliseconds: 10 })
    group.pull(4, 0)
    group.ack(["e0", "e2", "nope"], 1)
    group.tick(10)
    expect(ids(group.pull(10, 10).messages)).toEqual(["e1", "e3"])
  })

  it("nack Retry hands the message out again at once with its retry count raised", () => {
    const group = liveGroup(1)
    group.pull(1, 0)
    group.nack(["e0"], "Retry", 1)
    expect(group.pull(1, 1).messages.map((d) => [d.event.id, d.retryCount])).toEqual([["e0", 1]])
  })

  it("nack Retry past maxRetryCount parks", () => {
    const group = liveGroup(0, { maxRetryCount: 1 })
    group.pull(1, 0)
    group.nack(["e0"], "Retry", 0)
    group.pull(1, 0)
    expect(ofTag(group.nack(["e0"], "Retry", 0), "Park")).toHaveLength(1)
  })

  it("nack Park parks at once, whatever the retry count", () => {
    const group = liveGroup(1)
    group.pull(2, 0)
    const parks = ofTag(group.nack(["e1"], "Park", 0), "Park")
    expect(parks.map((p) => p.event.id)).toEqual(["e1"])
    expect(parks[0]!.reason).toMatch(/NAK/)
  })

  it("nack Skip finishes the message without delivering it again", () => {
    const group = liveGroup(0, { messageTimeoutMilliseconds: 10 })
    group.pull(1, 0)
    group.nack(["e0"], "Skip", 0)
    group.tick(100)
    expect(group.pull(1, 100).messages).toEqual([])
    expect(group.stats().outstandingMessagesCount).toBe(0)
  })

  it("nack Stop asks the driver to stop and leaves the message in flight", () => {
    const group = liveGroup(0, { messageTimeoutMilliseconds: 10 })
    group.pull(1, 0)
    expect(ofTag(group.nack(["e0", "other"], "Stop", 0), "StopRequested")).toEqual([
      { _tag: "StopRequested", ids: ["e0"] }
    ])
    expect(group.stats().outstandingMessagesCount).toBe(1)
    group.tick(10)
    expect(group.pull(1, 10).messages[0]!.retryCount).toBe(1)
  })

  it("replays parked messages after the retries, and their acks move no checkpoint", () => {
    const group = makeGroup({ minCheckPointCount: 1, checkPointAfterMilliseconds: 0 })
    group.start(0)
    expect(group.startReplay()).toBe(true)
    expect(group.startReplay()).toBe(false)
    expect(group.stats().status).toEqual(["Behind", "OutstandingPageRequest", "ReplayingParkedMessages"])
    group.replayed([ev(7)], true, 0)
    group.readCompleted({ events: [ev(0)], endOfStream: true }, 0)
    expect(group.pull(5, 0).messages.map((d) => [d.event.id, d.retryCount])).toEqual([
      ["e7", 0],
      ["e0", 0]
    ])
    expect(ofTag(group.ack(["e7"], 1), "WriteCheckpoint")).toEqual([])
    expect(ofTag(group.tick(2000), "WriteCheckpoint")).toEqual([])
    expect(ofTag(group.ack(["e0"], 2000), "WriteCheckpoint")).toEqual([])
    expect(ofTag(group.tick(4000), "WriteCheckpoint")).toEqual([{ _tag: "WriteCheckpoint", position: 0 }])
    expect(group.stats().status).toEqual(["Live"])
  })

  it("does not hand out a replayed parked message while the same event is in flight", () => {
    const group = liveGroup(0, { messageTimeoutMilliseconds: 10 })
    group.pull(1, 0)
    group.startReplay()
    group.replayed([ev(0)], true, 0)
    expect(group.pull(5, 0).messages).toEqual([])
    group.ack(["e0"], 1)
    expect(group.pull(5, 1).messages.map((d) => [d.event.id, d.retryCount])).toEqual([["e0", 0]])
  })

  it("tells when it last handed out a message and when one was last acked", () => {
    const group = liveGroup(2)
    expect(group.stats()).toMatchObject({ lastDeliveryAt: undefined, lastAckAt: undefined })
    group.pull(1, 10)
    group.ack(["nope"], 15)
    expect(group.stats()).toMatchObject({ lastDeliveryAt: 10, lastAckAt: undefined })
    group.pull(1, 20)
    group.ack(["e0"], 30)
    expect(group.stats()).toMatchObject({ lastDeliveryAt: 20, lastAckAt: 30 })
  })

  it("counts what it handed out and the furthest position", () => {
    const group = liveGroup(2, { messageTimeoutMilliseconds: 10 })
    group.pull(2, 0)
    group.tick(10)
    group.pull(3, 10)
    expect(group.stats()).toMatchObject({ totalItemsProcessed: 5, lastProcessedPosition: 2, lastKnownPosition: 2 })
  })
})
