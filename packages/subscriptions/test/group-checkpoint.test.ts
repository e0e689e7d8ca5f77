import { describe, expect, it } from "vitest"
import { evs, ids, liveGroup, makeGroup, ofTag } from "./groupFixtures.js"

const checkpoints = (effects: Parameters<typeof ofTag>[0]) => ofTag(effects, "WriteCheckpoint").map((c) => c.position)

describe("a group's checkpoints", () => {
  it("on the clock, once checkPointAfterMilliseconds passed and at least minCheckPointCount finished", () => {
    const group = liveGroup(9, { checkPointAfterMilliseconds: 1000, minCheckPointCount: 3, maxCheckPointCount: 100 })
    group.pull(10, 0)
    group.ack(["e0", "e1"], 0)
    expect(checkpoints(group.tick(0))).toEqual([])
    group.ack(["e2"], 0)
    expect(checkpoints(group.ack([], 0))).toEqual([])
    expect(checkpoints(group.tick(0))).toEqual([2])
    group.ack(["e3", "e4", "e5"], 10)
    expect(checkpoints(group.tick(999))).toEqual([])
    expect(checkpoints(group.tick(1000))).toEqual([5])
    expect(group.stats().lastCheckpoint).toBe(5)
  })

  it("at once, on any input, when maxCheckPointCount finished", () => {
    const group = liveGroup(9, { checkPointAfterMilliseconds: 60_000, minCheckPointCount: 1, maxCheckPointCount: 4 })
    group.pull(10, 0)
    expect(checkpoints(group.ack(["e0", "e1", "e2"], 0))).toEqual([])
    expect(checkpoints(group.ack(["e3"], 0))).toEqual([3])
    expect(checkpoints(group.ack(["e4", "e5", "e6", "e7"], 1))).toEqual([7])
  })

  it("never passes an event still in flight, waiting for a retry or for its park", () => {
    const group = liveGroup(5, {
      checkPointAfterMilliseconds: 0,
      minCheckPointCount: 1,
      messageTimeoutMilliseconds: 50
    })
    group.pull(6, 0)
    group.ack(["e0", "e2", "e3", "e4", "e5"], 0)
    expect(checkpoints(group.tick(0))).toEqual([0])
    group.nack(["e1"], "Park", 0)
    expect(checkpoints(group.tick(100))).toEqual([])
    expect(checkpoints(group.parked(["e1"], 100))).toEqual([])
    expect(checkpoints(group.tick(100))).toEqual([5])
  })

  it("a timed-out message holds the checkpoint until it is acked", () => {
    const group = liveGroup(2, { checkPointAfterMilliseconds: 0, minCheckPointCount: 1, messageTimeoutMilliseconds: 5 })
    group.pull(3, 0)
    group.ack(["e1", "e2"], 0)
    expect(checkpoints(group.tick(10))).toEqual([])
    expect(group.stats().retryBufferCount).toBe(1)
    group.pull(1, 10)
    group.nack(["e0"], "Skip", 11)
    expect(checkpoints(group.tick(11))).toEqual([2])
  })

  it("a restart after the written checkpoint delivers what lay after it, acked or not", () => {
    const settings = { checkPointAfterMilliseconds: 0, minCheckPointCount: 1 }
    const group = liveGroup(4, settings)
    group.pull(5, 0)
    group.ack(["e0", "e1", "e3"], 0)
    const [written] = checkpoints(group.tick(0))
    expect(written).toBe(1)
    const restarted = makeGroup(settings, { _tag: "After", position: written! })
    restarted.start(1)
    restarted.readCompleted({ events: evs(0, 4), endOfStream: true }, 1)
    expect(ids(restarted.pull(10, 1).messages)).toEqual(["e2", "e3", "e4"])
    expect(restarted.stats().lastCheckpoint).toBe(1)
  })

  it("writes nothing before anything finished", () => {
    const group = makeGroup({ checkPointAfterMilliseconds: 0, minCheckPointCount: 0 })
    group.start(0)
    expect(checkpoints(group.tick(10))).toEqual([])
  })
})
