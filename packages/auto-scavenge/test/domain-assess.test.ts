/**
 * What the leader does next in each status (assess), how each action's outcome is recorded (afterStart,
 * afterPoll, afterStop), what gossip records (onGossip), and when the cluster counts as healthy.
 */
import { describe, expect, it } from "vitest"
import {
  afterPoll,
  afterStart,
  afterStop,
  applyAll,
  assess,
  isHealthy,
  onGossip,
  type AssessContext,
  type AutoScavengeEvent,
  type AutoScavengeState,
  type ClusterView,
  type PollOutcome,
  type Status
} from "../src/index.js"
import {
  A,
  AllStatuses,
  B,
  C,
  CycleId,
  D,
  everyMinutes,
  member,
  Minute,
  R,
  stateIn,
  T0,
  viewOf
} from "./domainFixtures.js"

const at = (minutes: number) => T0 + minutes * Minute
const now = at(71)
const ctx = (view: ClusterView, time = now): AssessContext => ({
  view,
  now: time,
  next: everyMinutes,
  newClusterScavengeId: () => "new-cycle"
})
const healthy = viewOf(A)
/** A healthy view led by A with these writer checkpoints for A, B and C. */
const ledByA = (a: number, b: number, c: number) =>
  viewOf(A, [
    [A, a],
    [B, b],
    [C, c]
  ])
const designation = (node: typeof A) => ({
  _tag: "Emit",
  events: [{ _tag: "NodeDesignated", nodeId: node, designatedAt: now }]
})
/** Three voters expected, two listed. */
const unhealthy: ClusterView = { ...healthy, members: healthy.members.slice(0, 2) }

const completed = (node: typeof A, m = 0): AutoScavengeEvent => ({
  _tag: "NodeScavengeCompleted",
  nodeId: node,
  completedAt: at(m),
  result: "Success"
})
/** A cycle over A, B, C with the given nodes already scavenged (each designated, started and completed). */
const continuingAfter = (...done: ReadonlyArray<typeof A>): AutoScavengeState =>
  applyAll(
    stateIn("ContinuingClusterScavenge"),
    done.flatMap((n): Array<AutoScavengeEvent> => [
      { _tag: "NodeDesignated", nodeId: n, designatedAt: at(11) },
      { _tag: "NodeScavengeStarted", nodeId: n, scavengeId: `s-${n.address}`, startedAt: at(11) },
      completed(n, 12)
    ])
  )

describe("assess", () => {
  describe("idle and paused statuses do nothing, even when a cycle is due", () => {
    it.each(["NotConfigured", "PausedWhileIdle", "PausedWhileScavengingCluster"] as const)("%s", (status) => {
      expect(assess(stateIn(status), ctx(healthy, at(500)))._tag).toBe("Wait")
    })
  })

  describe("Waiting", () => {
    const waiting = stateIn("Waiting") // configured at T0, every 10 minutes: due at 10

    it("due and healthy: a cycle starts over every gossip member, read-only replicas included", () => {
      const withReplica = viewOf(A, undefined, [member(R, { isReadOnlyReplica: true })])
      expect(assess(waiting, ctx(withReplica, at(10)))).toEqual({
        _tag: "Emit",
        events: [
          { _tag: "ClusterScavengeStarted", clusterScavengeId: "new-cycle", members: [A, B, C, R], startedAt: at(10) }
        ]
      })
    })

    it("not due yet: waits", () => {
      expect(assess(waiting, ctx(healthy, at(10) - 1))._tag).toBe("Wait")
    })

    it("due but unhealthy: waits for a healthy cluster", () => {
      expect(assess(waiting, ctx(unhealthy, at(30)))).toEqual({ _tag: "Wait", reason: "Waiting for a healthy cluster" })
    })

    it("counts from the anchor, not the starting point", () => {
      const resumed = applyAll(stateIn("PausedWhileIdle"), [{ _tag: "Resumed", resumedAt: at(25) }])
      expect(assess(resumed, ctx(healthy, at(29)))._tag).toBe("Wait")
      expect(assess(resumed, ctx(healthy, at(30)))._tag).toBe("Emit")
    })

    it("a schedule that never fires: waits", () => {
      const never = applyAll(stateIn("NotConfigured"), [
        { _tag: "ConfigurationUpdated", schedule: "never", updatedAt: T0 }
      ])
      expect(assess(never, ctx(healthy, at(1000)))._tag).toBe("Wait")
    })
  })

  describe("ContinuingClusterScavenge", () => {
    it("unhealthy: waits, designating nobody", () => {
      expect(assess(continuingAfter(), ctx(unhealthy))._tag).toBe("Wait")
    })

    it("unhealthy with nobody left: waits rather than completing", () => {
      expect(assess(continuingAfter(B, C, A), ctx(unhealthy))._tag).toBe("Wait")
    })

    it("nobody left: the cycle completes with its members", () => {
      const state = applyAll(continuingAfter(B, C, A), [{ _tag: "ClusterMembersChanged", added: [D], removed: [] }])
      const view = viewOf(A, [
        [A, 1],
        [B, 1],
        [C, 1],
        [D, 1]
      ])
      const withD = applyAll(state, [{ _tag: "NodeDesignated", nodeId: D, designatedAt: at(1) }, completed(D)])
      expect(assess(withD, ctx(view))).toEqual({
        _tag: "Emit",
        events: [
          { _tag: "ClusterScavengeCompleted", clusterScavengeId: CycleId, members: [A, B, C, D], completedAt: now }
        ]
      })
    })

    it("the follower with the lowest writer checkpoint is designated", () => {
      const view = ledByA(10, 300, 200)
      expect(assess(continuingAfter(), ctx(view))).toEqual(designation(C))
      const other = ledByA(10, 100, 200)
      expect(assess(continuingAfter(), ctx(other))).toEqual(designation(B))
    })

    it("a node already scavenged is not designated again", () => {
      const view = ledByA(10, 100, 200)
      expect(assess(continuingAfter(B), ctx(view))).toEqual(designation(C))
    })

    it("the leader is designated only when it is the last node left", () => {
      const view = ledByA(10, 900, 200)
      expect(assess(continuingAfter(C), ctx(view))).toEqual(designation(B))
      expect(assess(continuingAfter(C, B), ctx(view))).toEqual(designation(A))
    })

    it("a remaining member missing from gossip is skipped; the leader is still not chosen while it remains", () => {
      // C left gossip (its removal not recorded yet): B is chosen although C is further behind.
      const withoutC = viewOf(A, [
        [A, 10],
        [B, 500]
      ])
      expect(assess(continuingAfter(), ctx(withoutC))).toEqual(designation(B))
      // Only the leader and C remain: nobody is designated.
      expect(assess(continuingAfter(B), ctx(withoutC))._tag).toBe("Wait")
    })
  })

  describe("StartingNodeScavenge", () => {
    it("this leader designated in a cluster: resign", () => {
      expect(assess(stateIn("StartingNodeScavenge"), ctx(viewOf(A)))).toEqual({ _tag: "Resign" })
    })

    it("a single node designated: it scavenges itself", () => {
      const single = viewOf(A, [[A, 10]])
      expect(assess(stateIn("StartingNodeScavenge"), ctx(single))).toEqual({ _tag: "StartNodeScavenge", node: A })
    })

    it("another node designated: start its scavenge, healthy or not", () => {
      expect(assess(stateIn("StartingNodeScavenge"), ctx(viewOf(B)))).toEqual({ _tag: "StartNodeScavenge", node: A })
      const unhealthyB: ClusterView = { ...viewOf(B), members: viewOf(B).members.slice(1) }
      expect(assess(stateIn("StartingNodeScavenge"), ctx(unhealthyB))).toEqual({ _tag: "StartNodeScavenge", node: A })
    })
  })

  it("MonitoringNodeScavenge: poll the designated node's scavenge", () => {
    expect(assess(stateIn("MonitoringNodeScavenge"), ctx(viewOf(B)))).toEqual({
      _tag: "PollNodeScavenge",
      node: A,
      scavengeId: "scav-a"
    })
  })

  describe("Pausing", () => {
    it("nobody designated: paused", () => {
      const state = applyAll(stateIn("Pausing"), [{ _tag: "ClusterMembersChanged", added: [], removed: [A] }])
      expect(assess(state, ctx(viewOf(B)))).toEqual({ _tag: "Emit", events: [{ _tag: "Paused", pausedAt: now }] })
    })

    it("a started scavenge is stopped by its id", () => {
      expect(assess(stateIn("Pausing"), ctx(viewOf(B)))).toEqual({
        _tag: "StopNodeScavenge",
        node: A,
        scavengeId: "scav-a"
      })
    })

    it("a scavenge not known to have started is stopped without an id", () => {
      const state = applyAll(stateIn("StartingNodeScavenge"), [{ _tag: "PauseRequested", requestedAt: at(20) }])
      expect(assess(state, ctx(viewOf(B)))).toEqual({ _tag: "StopNodeScavenge", node: A, scavengeId: undefined })
    })

    it("after a restarted node was designated again, its old scavenge's id is not used", () => {
      const state = applyAll(stateIn("MonitoringNodeScavenge"), [
        { _tag: "NodeDesignated", nodeId: A, designatedAt: at(20) },
        { _tag: "PauseRequested", requestedAt: at(21) }
      ])
      expect(assess(state, ctx(viewOf(B)))).toEqual({ _tag: "StopNodeScavenge", node: A, scavengeId: undefined })
    })
  })
})

describe("an action's outcome", () => {
  describe("afterStart", () => {
    const starting = stateIn("StartingNodeScavenge")

    it("started on the designated node: recorded with its id", () => {
      expect(afterStart(starting, A, { _tag: "Started", scavengeId: "s9" }, now)).toEqual([
        { _tag: "NodeScavengeStarted", nodeId: A, scavengeId: "s9", startedAt: now }
      ])
    })

    it("failed (unreachable, already running): nothing, retried on the next tick", () => {
      expect(afterStart(starting, A, { _tag: "Failed", message: "already running" }, now)).toEqual([])
    })

    it("no longer starting (paused meanwhile) or another node: nothing", () => {
      const pausing = applyAll(starting, [{ _tag: "PauseRequested", requestedAt: at(20) }])
      expect(afterStart(pausing, A, { _tag: "Started", scavengeId: "s9" }, now)).toEqual([])
      expect(afterStart(starting, B, { _tag: "Started", scavengeId: "s9" }, now)).toEqual([])
    })
  })

  describe("afterPoll", () => {
    const monitoring = stateIn("MonitoringNodeScavenge")
    const completedWith = (result: "Success" | "Stopped" | "Errored") => [
      { _tag: "NodeScavengeCompleted", nodeId: A, completedAt: now, result }
    ]
    const redesignated = [{ _tag: "NodeDesignated", nodeId: A, designatedAt: now }]

    const cases: ReadonlyArray<readonly [string, PollOutcome, ReadonlyArray<unknown>]> = [
      ["unreachable: retried, nothing cancelled", { _tag: "Unreachable", message: "timeout" }, []],
      ["in progress: waits", { _tag: "Last", scavengeId: "scav-a", result: "InProgress" }, []],
      ["Success", { _tag: "Last", scavengeId: "scav-a", result: "Success" }, completedWith("Success")],
      ["Stopped", { _tag: "Last", scavengeId: "scav-a", result: "Stopped" }, completedWith("Stopped")],
      ["Errored", { _tag: "Last", scavengeId: "scav-a", result: "Errored" }, completedWith("Errored")],
      [
        "another id: its status is used",
        { _tag: "Last", scavengeId: "other", result: "Errored" },
        completedWith("Errored")
      ],
      ["another id in progress: waits", { _tag: "Last", scavengeId: "other", result: "InProgress" }, []],
      [
        "restarted, Interrupted in history: designated again",
        { _tag: "Restarted", recorded: "Interrupted" },
        redesignated
      ],
      ["restarted, nothing in history: designated again", { _tag: "Restarted", recorded: undefined }, redesignated],
      ["restarted, Success in history", { _tag: "Restarted", recorded: "Success" }, completedWith("Success")],
      ["restarted, Stopped in history", { _tag: "Restarted", recorded: "Stopped" }, completedWith("Stopped")],
      ["restarted, Errored in history", { _tag: "Restarted", recorded: "Errored" }, completedWith("Errored")]
    ]

    it.each(cases)("%s", (_name, outcome, events) => {
      expect(afterPoll(monitoring, A, outcome, now)).toEqual(events)
    })

    it("not monitoring any more, or another node: nothing", () => {
      const pausing = stateIn("Pausing")
      expect(afterPoll(pausing, A, { _tag: "Last", scavengeId: "scav-a", result: "Success" }, now)).toEqual([])
      expect(afterPoll(monitoring, B, { _tag: "Last", scavengeId: "scav-a", result: "Success" }, now)).toEqual([])
      expect(afterPoll(monitoring, B, { _tag: "Restarted", recorded: undefined }, now)).toEqual([])
    })
  })

  describe("afterStop", () => {
    const pausing = stateIn("Pausing")

    it.each(["Stopped", "NotFound"] as const)("%s: paused", (outcome) => {
      expect(afterStop(pausing, outcome, now)).toEqual([{ _tag: "Paused", pausedAt: now }])
    })

    it("failed: nothing, retried on the next tick", () => {
      expect(afterStop(pausing, { failed: "unreachable" }, now)).toEqual([])
    })

    it.each(AllStatuses.filter((s) => s !== "Pausing"))("not pausing (%s): nothing", (status: Status) => {
      expect(afterStop(stateIn(status), "Stopped", now)).toEqual([])
    })
  })
})

describe("gossip", () => {
  const replaced = viewOf(A, [
    [A, 1],
    [B, 1],
    [D, 1]
  ])

  it("no cycle: membership is not recorded", () => {
    expect(onGossip(stateIn("Waiting"), replaced)).toEqual([])
    expect(onGossip(stateIn("PausedWhileIdle"), replaced)).toEqual([])
  })

  it("the same members: nothing", () => {
    expect(onGossip(stateIn("MonitoringNodeScavenge"), healthy)).toEqual([])
  })

  it.each(["ContinuingClusterScavenge", "MonitoringNodeScavenge", "Pausing", "PausedWhileScavengingCluster"] as const)(
    "%s: a member replaced at another endpoint is removed and its replacement added",
    (status) => {
      expect(onGossip(stateIn(status), replaced)).toEqual([{ _tag: "ClusterMembersChanged", added: [D], removed: [C] }])
    }
  )

  it("unhealthy: membership is not recorded", () => {
    expect(onGossip(stateIn("MonitoringNodeScavenge"), unhealthy)).toEqual([])
  })

  it("a read-only replica joining is a member, recorded while the voters are healthy", () => {
    const withReplica = viewOf(A, undefined, [member(R, { isReadOnlyReplica: true })])
    expect(onGossip(stateIn("MonitoringNodeScavenge"), withReplica)).toEqual([
      { _tag: "ClusterMembersChanged", added: [R], removed: [] }
    ])
  })

  it("a member gone only while unhealthy is recorded once the cluster is healthy again", () => {
    const twoOfThree = viewOf(A, [
      [A, 1],
      [B, 1]
    ])
    expect(onGossip(stateIn("MonitoringNodeScavenge"), { ...twoOfThree, clusterSize: 3 })).toEqual([])
    expect(onGossip(stateIn("MonitoringNodeScavenge"), { ...twoOfThree, clusterSize: 2 })).toEqual([
      { _tag: "ClusterMembersChanged", added: [], removed: [C] }
    ])
  })
})

describe("a healthy cluster", () => {
  const voters = (n: number) => [A, B, C, D].slice(0, n).map((id) => member(id))
  const view = (members: ClusterView["members"], clusterSize = 3): ClusterView => ({ self: A, clusterSize, members })

  it("exactly the configured number of voters", () => {
    expect(isHealthy(view(voters(3)))).toBe(true)
    expect(isHealthy(view(voters(2)))).toBe(false)
    expect(isHealthy(view(voters(4)))).toBe(false)
    expect(isHealthy(view(voters(1), 1))).toBe(true)
  })

  it("read-only replicas do not count", () => {
    expect(isHealthy(view([...voters(2), member(R, { isReadOnlyReplica: true })]))).toBe(false)
    expect(isHealthy(view([...voters(3), member(R, { isReadOnlyReplica: true })]))).toBe(true)
  })

  it("a member gossip has not heard from itself (no instance id) does not count", () => {
    expect(isHealthy(view([...voters(2), member(C, { instanceId: "" })]))).toBe(false)
    expect(isHealthy(view([...voters(2), member(C, { instanceId: "00000000-0000-0000-0000-000000000000" })]))).toBe(
      false
    )
  })

  it("a dead member still listed with its instance id counts (liveness is not looked at)", () => {
    // The view carries no liveness: a member listed with its instance id is counted whatever its state.
    const deadC = member(C, { instanceId: "instance-of-a-dead-node", writerCheckpoint: 0 })
    expect(isHealthy(view([...voters(2), deadC]))).toBe(true)
    expect(onGossip(stateIn("MonitoringNodeScavenge"), { ...healthy, members: [...voters(2), deadC] })).toEqual([])
  })
})
