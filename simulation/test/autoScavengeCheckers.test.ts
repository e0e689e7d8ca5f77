// The auto-scavenge seeds' rules over the record both streams hold, each shown to pass a correct record
// and fail the broken one it exists for (records built by hand: events, positions, the leader that wrote each).
import { describe, expect, it } from "vitest"
import type { AutoScavengeEvent, NodeId } from "@vellum/auto-scavenge"
import {
  checkLeaderLast,
  checkNothingWhilePaused,
  checkOneEach,
  checkRehydration,
  checkStartsSeen,
  holdsRecord,
  type RecordedEvent
} from "../src/cluster/autoScavengeHistory.js"
import type { NodeScavenge } from "../src/cluster/nodeScavenges.js"

const node = (n: number): NodeId => ({ address: `10.0.0.${n}`, port: 2113 })
const labelOf = (id: NodeId) => `n${id.address.split(".")[3]}`

/** A record from events, each written by `writer` (n1 unless an entry says otherwise). */
const recordOf = (...entries: Array<AutoScavengeEvent | [AutoScavengeEvent, string]>): Array<RecordedEvent> =>
  entries.map((entry, i) => {
    const [event, writer] = Array.isArray(entry) ? entry : [entry, "n1"]
    return { event, position: (i + 1) * 100, writer }
  })

const configured: AutoScavengeEvent = { _tag: "ConfigurationUpdated", schedule: "* * * * *", updatedAt: 1 }
const started = (...members: Array<number>): AutoScavengeEvent => ({
  _tag: "ClusterScavengeStarted",
  clusterScavengeId: "c1",
  members: members.map(node),
  startedAt: 2
})
const designated = (n: number): AutoScavengeEvent => ({ _tag: "NodeDesignated", nodeId: node(n), designatedAt: 3 })
const nodeStarted = (n: number, id = `s${n}`): AutoScavengeEvent => ({
  _tag: "NodeScavengeStarted",
  nodeId: node(n),
  scavengeId: id,
  startedAt: 4
})
const nodeDone = (n: number): AutoScavengeEvent => ({
  _tag: "NodeScavengeCompleted",
  nodeId: node(n),
  completedAt: 5,
  result: "Success"
})
const completed = (...members: Array<number>): AutoScavengeEvent => ({
  _tag: "ClusterScavengeCompleted",
  clusterScavengeId: "c1",
  members: members.map(node),
  completedAt: 6
})
/** Node n scavenged, designated and started by `writer`. */
const scavenged = (n: number, writer: string): Array<[AutoScavengeEvent, string]> => [
  [designated(n), writer],
  [nodeStarted(n), writer],
  [nodeDone(n), writer]
]

describe("auto-scavenge's record", () => {
  // n1 leads: n2 and n3 first, then n1 designates itself, resigns, and n2 (now leading) starts it.
  const good = recordOf(
    configured,
    started(1, 2, 3),
    ...scavenged(2, "n1"),
    ...scavenged(3, "n1"),
    [designated(1), "n1"],
    [nodeStarted(1), "n2"],
    [nodeDone(1), "n2"],
    [completed(1, 2, 3), "n2"]
  )

  it("the leader goes last: a fresh self-designation with others left, or a follower after it, fails", () => {
    expect(checkLeaderLast(good, labelOf)).toBeUndefined()
    const early = recordOf(configured, started(1, 2, 3), ...scavenged(2, "n1"), [designated(1), "n1"])
    expect(checkLeaderLast(early, labelOf)).toMatch(/the leader 10.0.0.1:2113 designated itself before 10.0.0.3/)
    const after = recordOf(
      configured,
      started(1, 2, 3),
      ...scavenged(2, "n1"),
      ...scavenged(3, "n1"),
      [designated(1), "n1"],
      [designated(3), "n2"]
    )
    expect(checkLeaderLast(after, labelOf)).toMatch(/10.0.0.3:2113 designated after the leader/)
    // A designated follower elected meanwhile is designated again by itself (the restart path): not its turn.
    const restart = recordOf(configured, started(1, 2, 3), [designated(2), "n1"], [designated(2), "n2"])
    expect(checkLeaderLast(restart, labelOf)).toBeUndefined()
  })

  it("every member of a completed cycle completed exactly one node scavenge", () => {
    expect(checkOneEach(good)).toBeUndefined()
    const twice = recordOf(configured, started(1, 2), ...scavenged(2, "n1"), [nodeDone(2), "n1"], ...scavenged(1, "n2"))
    expect(checkOneEach([...twice, { event: completed(1, 2), position: 10_000, writer: "n2" }])).toMatch(
      /10.0.0.2:2113 having completed 2/
    )
    const none = recordOf(configured, started(1, 2), ...scavenged(2, "n1"), [completed(1, 2), "n1"])
    expect(checkOneEach(none)).toMatch(/10.0.0.1:2113 having completed 0/)
  })

  it("nothing is designated or started between Paused and Resumed", () => {
    const paused: AutoScavengeEvent = { _tag: "Paused", pausedAt: 7 }
    const resumed: AutoScavengeEvent = { _tag: "Resumed", resumedAt: 8 }
    expect(checkNothingWhilePaused(recordOf(configured, paused, resumed, started(1, 2), designated(2)))).toBeUndefined()
    expect(checkNothingWhilePaused(recordOf(configured, started(1, 2), paused, designated(2)))).toMatch(/while paused/)
  })

  it("every recorded start is a run the member's scavenger showed", () => {
    const run = (nodeName: string, scavengeId: string): NodeScavenge => ({
      node: nodeName,
      scavengeId,
      startSeq: 1,
      startedAt: 1
    })
    const runs = [run("n2", "s2"), run("n3", "s3"), run("n1", "s1")]
    expect(checkStartsSeen(good, runs, labelOf)).toBeUndefined()
    expect(checkStartsSeen(good, [run("n2", "s2"), run("n3", "other"), run("n1", "s1")], labelOf)).toMatch(
      /s3 recorded as started on n3/
    )
  })

  it("the leader's status shows the state its record gives", () => {
    const midCycle = recordOf(configured, started(1, 2, 3), ...scavenged(2, "n1"), designated(3))
    const member = (n: number, done: boolean) => ({ address: `10.0.0.${n}`, port: 2113, done })
    const body = {
      state: "InProgress",
      schedule: "* * * * *",
      cycle: {
        clusterScavengeId: "c1",
        members: [member(1, false), member(2, true), member(3, false)],
        designated: node(3)
      }
    }
    expect(holdsRecord(body, midCycle)).toBe("same")
    expect(holdsRecord({ ...body, state: "Waiting", cycle: null }, midCycle)).toMatch(
      /shows .*Waiting.* its record gives/
    )
    const notDone = {
      ...body,
      cycle: { ...body.cycle, members: [member(1, false), member(2, false), member(3, false)] }
    }
    expect(holdsRecord(notDone, midCycle)).toMatch(/its record gives/)
  })

  it("what a new leader loads equals what the recording leaders held", () => {
    expect(checkRehydration(good, 100)).toBeUndefined()
    const midCycle = recordOf(configured, started(1, 2, 3), ...scavenged(2, "n1"), designated(3))
    expect(checkRehydration(midCycle, 100)).toBeUndefined()
    // A cycle completed under another id is not the cycle's end: loading stops there, applying ignores it.
    const foreign = recordOf(configured, started(1, 2), ...scavenged(2, "n1"), {
      _tag: "ClusterScavengeCompleted",
      clusterScavengeId: "other",
      members: [node(1), node(2)],
      completedAt: 9
    })
    expect(checkRehydration(foreign, 100)).toMatch(/a new leader would load/)
  })
})
