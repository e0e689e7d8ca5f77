import { describe, expect, it } from "vitest"
import { defaultGroupSettings } from "../src/config/GroupSettings.js"
import { Group, type GroupEvent, type PositionOrder } from "../src/group/index.js"

/** A `$all` group's positions: log positions, compared by commit then prepare, with gaps between events. */
interface LogPosition {
  readonly commit: number
  readonly prepare: number
}

const logOrder: PositionOrder<LogPosition> = {
  compare: (a, b) => a.commit - b.commit || a.prepare - b.prepare
}

const at = (commit: number): LogPosition => ({ commit, prepare: commit })
const logEvent = (commit: number): GroupEvent<LogPosition> => ({
  id: `x${commit}`,
  position: at(commit),
  pinStream: "s"
})

const allGroup = (settings = {}) =>
  new Group<LogPosition, GroupEvent<LogPosition>>({ ...defaultGroupSettings, ...settings }, logOrder, {
    _tag: "At",
    position: at(0)
  })

describe("a group over log positions (room for $all groups)", () => {
  it("reads on after the last event taken, whatever the gaps", () => {
    const group = allGroup()
    group.start(0)
    const effects = group.readCompleted({ events: [logEvent(100), logEvent(250)], endOfStream: false }, 0)
    expect(effects).toEqual([{ _tag: "Read", from: { _tag: "After", position: at(250) }, count: 20 }])
    expect(group.pull(5, 0).messages.map((d) => d.event.id)).toEqual(["x100", "x250"])
  })

  it("a filtered read moves the cursor and the checkpoint past the events it passed over", () => {
    const group = allGroup({ maxCheckPointCount: 7 })
    group.start(0)
    const effects = group.readCompleted(
      { events: [logEvent(100), logEvent(250)], endOfStream: false, passed: { through: at(900), count: 5 } },
      0
    )
    expect(effects).toEqual([{ _tag: "Read", from: { _tag: "After", position: at(900) }, count: 20 }])
    expect(group.stats().lastKnownPosition).toEqual(at(900))
    group.pull(5, 0)
    expect(group.ack(["x100"], 1)).toEqual([])
    expect(group.ack(["x250"], 1)).toEqual([{ _tag: "WriteCheckpoint", position: at(900) }])
  })

  it("goes live when a read reaches an event appended meanwhile", () => {
    const group = allGroup()
    group.start(0)
    group.appended(logEvent(1000), 0)
    group.readCompleted({ events: [logEvent(400), logEvent(1000)], endOfStream: false }, 0)
    expect(group.stats().status).toEqual(["Live"])
    group.appended(logEvent(1000), 0)
    group.appended(logEvent(1300), 0)
    expect(group.pull(10, 0).messages.map((d) => d.event.id)).toEqual(["x400", "x1000", "x1300"])
  })
})
