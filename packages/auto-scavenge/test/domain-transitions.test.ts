/**
 * The state machine's rules as tables: what applying each event does in each status, every transition of
 * the machine end to end, what each user command records and answers in each status, and how the status
 * shows the time until the next cycle.
 */
import { describe, expect, it } from "vitest"
import {
  apply,
  applyAll,
  decide,
  initialState,
  publicStateOf,
  statusOf,
  type AutoScavengeEvent,
  type AutoScavengeState,
  type CommandReply,
  type Status,
  type UserCommand
} from "../src/index.js"
import { A, AllStatuses, B, C, CycleId, D, Every10, everyMinutes, Minute, stateIn, T0 } from "./domainFixtures.js"

const at = (minutes: number) => T0 + minutes * Minute
const cycle = (members = [A, B, C], scavenged: typeof members = []) => ({ id: CycleId, members, scavenged })

interface Row {
  readonly name: string
  readonly from: AutoScavengeState
  readonly event: AutoScavengeEvent
  /** The fields that change; every other field must stay as it was. */
  readonly changes: Partial<AutoScavengeState>
}

const rows: ReadonlyArray<Row> = [
  // ConfigurationUpdated: schedule, starting point and anchor; NotConfigured becomes Waiting, nothing else moves.
  {
    name: "ConfigurationUpdated in NotConfigured → Waiting, anchor = starting point = updatedAt",
    from: stateIn("NotConfigured"),
    event: { _tag: "ConfigurationUpdated", schedule: "every 5", updatedAt: at(50) },
    changes: { status: "Waiting", schedule: "every 5", startingPoint: at(50), anchor: at(50) }
  },
  ...AllStatuses.filter((s) => s !== "NotConfigured").map((status): Row => ({
    name: `ConfigurationUpdated in ${status} keeps the status and resets the anchor`,
    from: stateIn(status),
    event: { _tag: "ConfigurationUpdated", schedule: "every 5", updatedAt: at(50) },
    changes: { schedule: "every 5", startingPoint: at(50), anchor: at(50) }
  })),
  // Initialized: anchor = now when configured.
  {
    name: "Initialized when configured: anchor = now",
    from: stateIn("Waiting"),
    event: { _tag: "Initialized", at: at(99) },
    changes: { anchor: at(99) }
  },
  {
    name: "Initialized while scavenging: anchor = now, status kept",
    from: stateIn("MonitoringNodeScavenge"),
    event: { _tag: "Initialized", at: at(99) },
    changes: { anchor: at(99) }
  },
  {
    name: "Initialized when not configured: nothing",
    from: stateIn("NotConfigured"),
    event: { _tag: "Initialized", at: at(99) },
    changes: {}
  },
  {
    name: "Initialized paused while idle but never configured: nothing",
    from: applyAll(initialState, [{ _tag: "Paused", pausedAt: at(1) }]),
    event: { _tag: "Initialized", at: at(99) },
    changes: {}
  },
  // ClusterScavengeStarted: a new cycle with the members given and nothing scavenged.
  {
    name: "ClusterScavengeStarted in Waiting → Continuing with the event's members",
    from: stateIn("Waiting"),
    event: { _tag: "ClusterScavengeStarted", clusterScavengeId: "c9", members: [B, D], startedAt: at(20) },
    changes: { status: "ContinuingClusterScavenge", clusterScavenge: { id: "c9", members: [B, D], scavenged: [] } }
  },
  {
    name: "ClusterScavengeStarted clears the scavenged set",
    from: applyAll(stateIn("MonitoringNodeScavenge"), [
      { _tag: "NodeScavengeCompleted", nodeId: A, completedAt: at(15), result: "Success" }
    ]),
    event: { _tag: "ClusterScavengeStarted", clusterScavengeId: "c9", members: [A, B], startedAt: at(20) },
    changes: { status: "ContinuingClusterScavenge", clusterScavenge: { id: "c9", members: [A, B], scavenged: [] } }
  },
  // NodeDesignated.
  {
    name: "NodeDesignated in Continuing → Starting with the node designated",
    from: stateIn("ContinuingClusterScavenge"),
    event: { _tag: "NodeDesignated", nodeId: B, designatedAt: at(20) },
    changes: { status: "StartingNodeScavenge", designated: B }
  },
  {
    name: "NodeDesignated again in Monitoring (a restarted node) → Starting, the old scavenge id forgotten",
    from: stateIn("MonitoringNodeScavenge"),
    event: { _tag: "NodeDesignated", nodeId: A, designatedAt: at(20) },
    changes: { status: "StartingNodeScavenge", designated: A, nodeScavengeId: undefined }
  },
  {
    name: "NodeDesignated after a pause and resume: another node's old scavenge id is not carried over",
    from: applyAll(stateIn("PausedWhileScavengingCluster"), [{ _tag: "Resumed", resumedAt: at(30) }]),
    event: { _tag: "NodeDesignated", nodeId: B, designatedAt: at(31) },
    changes: { status: "StartingNodeScavenge", designated: B, nodeScavengeId: undefined }
  },
  {
    // The cycle's start can age out of the stream while later events remain: they must not make a cycle-less
    // InProgress that never ends.
    name: "NodeDesignated with no cycle (its start no longer in the stream) is ignored",
    from: stateIn("Waiting"),
    event: { _tag: "NodeDesignated", nodeId: B, designatedAt: at(20) },
    changes: {}
  },
  // NodeScavengeStarted: only for the designated node.
  {
    name: "NodeScavengeStarted for the designated node → Monitoring with its id",
    from: stateIn("StartingNodeScavenge"),
    event: { _tag: "NodeScavengeStarted", nodeId: A, scavengeId: "s2", startedAt: at(20) },
    changes: { status: "MonitoringNodeScavenge", nodeScavengeId: "s2" }
  },
  {
    name: "NodeScavengeStarted for another node is ignored",
    from: stateIn("StartingNodeScavenge"),
    event: { _tag: "NodeScavengeStarted", nodeId: B, scavengeId: "s2", startedAt: at(20) },
    changes: {}
  },
  {
    name: "NodeScavengeStarted with no designated node is ignored",
    from: stateIn("ContinuingClusterScavenge"),
    event: { _tag: "NodeScavengeStarted", nodeId: A, scavengeId: "s2", startedAt: at(20) },
    changes: {}
  },
  // NodeScavengeCompleted: only for the designated node; any result counts as done.
  ...(["Success", "Stopped", "Errored"] as const).map((result): Row => ({
    name: `NodeScavengeCompleted(${result}) for the designated node → Continuing, node scavenged`,
    from: stateIn("MonitoringNodeScavenge"),
    event: { _tag: "NodeScavengeCompleted", nodeId: A, completedAt: at(20), result },
    changes: {
      status: "ContinuingClusterScavenge",
      designated: undefined,
      nodeScavengeId: undefined,
      clusterScavenge: cycle([A, B, C], [A])
    }
  })),
  {
    name: "NodeScavengeCompleted for another node is ignored",
    from: stateIn("MonitoringNodeScavenge"),
    event: { _tag: "NodeScavengeCompleted", nodeId: B, completedAt: at(20), result: "Success" },
    changes: {}
  },
  {
    name: "NodeScavengeCompleted with no designated node is ignored",
    from: stateIn("ContinuingClusterScavenge"),
    event: { _tag: "NodeScavengeCompleted", nodeId: A, completedAt: at(20), result: "Success" },
    changes: {}
  },
  // ClusterMembersChanged.
  {
    name: "ClusterMembersChanged adds members and removes others from members and the scavenged set",
    from: applyAll(stateIn("MonitoringNodeScavenge"), [
      { _tag: "NodeScavengeCompleted", nodeId: A, completedAt: at(15), result: "Success" },
      { _tag: "NodeDesignated", nodeId: B, designatedAt: at(16) }
    ]),
    event: { _tag: "ClusterMembersChanged", added: [D], removed: [A] },
    changes: { clusterScavenge: cycle([B, C, D], []) }
  },
  {
    name: "ClusterMembersChanged adding a member already there keeps one of it",
    from: stateIn("ContinuingClusterScavenge"),
    event: { _tag: "ClusterMembersChanged", added: [B, D], removed: [] },
    changes: { clusterScavenge: cycle([A, B, C, D]) }
  },
  ...(["StartingNodeScavenge", "MonitoringNodeScavenge"] as const).map((status): Row => ({
    name: `ClusterMembersChanged removing the designated node in ${status} → Continuing, designation dropped`,
    from: stateIn(status),
    event: { _tag: "ClusterMembersChanged", added: [D], removed: [A] },
    changes: {
      status: "ContinuingClusterScavenge",
      designated: undefined,
      nodeScavengeId: undefined,
      clusterScavenge: cycle([B, C, D])
    }
  })),
  {
    name: "ClusterMembersChanged removing the designated node while Pausing stays Pausing, designation dropped",
    from: stateIn("Pausing"),
    event: { _tag: "ClusterMembersChanged", added: [], removed: [A] },
    changes: { designated: undefined, nodeScavengeId: undefined, clusterScavenge: cycle([B, C]) }
  },
  {
    name: "ClusterMembersChanged removing another node keeps the designation",
    from: stateIn("MonitoringNodeScavenge"),
    event: { _tag: "ClusterMembersChanged", added: [], removed: [C] },
    changes: { clusterScavenge: cycle([A, B]) }
  },
  {
    name: "ClusterMembersChanged while paused scavenging records the membership, stays paused",
    from: stateIn("PausedWhileScavengingCluster"),
    event: { _tag: "ClusterMembersChanged", added: [D], removed: [B] },
    changes: { clusterScavenge: cycle([A, C, D]) }
  },
  // ClusterScavengeCompleted.
  {
    name: "ClusterScavengeCompleted with the cycle's id → Waiting, anchor = completedAt, cycle gone",
    from: stateIn("ContinuingClusterScavenge"),
    event: { _tag: "ClusterScavengeCompleted", clusterScavengeId: CycleId, members: [A, B, C], completedAt: at(40) },
    changes: { status: "Waiting", anchor: at(40), clusterScavenge: undefined }
  },
  {
    name: "ClusterScavengeCompleted with another id is ignored",
    from: stateIn("ContinuingClusterScavenge"),
    event: { _tag: "ClusterScavengeCompleted", clusterScavengeId: "other", members: [A, B, C], completedAt: at(40) },
    changes: {}
  },
  {
    name: "ClusterScavengeCompleted with no cycle is ignored",
    from: stateIn("Waiting"),
    event: { _tag: "ClusterScavengeCompleted", clusterScavengeId: CycleId, members: [A, B, C], completedAt: at(40) },
    changes: {}
  },
  // PauseRequested, Paused, Resumed.
  ...(["StartingNodeScavenge", "MonitoringNodeScavenge"] as const).map((status): Row => ({
    name: `PauseRequested in ${status} → Pausing, designation kept`,
    from: stateIn(status),
    event: { _tag: "PauseRequested", requestedAt: at(20) },
    changes: { status: "Pausing" }
  })),
  ...(["NotConfigured", "Waiting", "PausedWhileIdle"] as const).map((status): Row => ({
    name: `PauseRequested with no cycle (in ${status}) is ignored: there is nothing to stop`,
    from: stateIn(status),
    event: { _tag: "PauseRequested", requestedAt: at(20) },
    changes: {}
  })),
  ...(["NotConfigured", "Waiting"] as const).map((status): Row => ({
    name: `Paused in ${status} → PausedWhileIdle`,
    from: stateIn(status),
    event: { _tag: "Paused", pausedAt: at(20) },
    changes: { status: "PausedWhileIdle" }
  })),
  {
    name: "Paused in Continuing → PausedWhileScavengingCluster",
    from: stateIn("ContinuingClusterScavenge"),
    event: { _tag: "Paused", pausedAt: at(20) },
    changes: { status: "PausedWhileScavengingCluster" }
  },
  {
    name: "Paused in Pausing → PausedWhileScavengingCluster, designation dropped, the node's scavenge id kept",
    from: stateIn("Pausing"),
    event: { _tag: "Paused", pausedAt: at(20) },
    changes: { status: "PausedWhileScavengingCluster", designated: undefined }
  },
  {
    name: "Resumed paused while idle → Waiting, anchor = resumedAt",
    from: stateIn("PausedWhileIdle"),
    event: { _tag: "Resumed", resumedAt: at(60) },
    changes: { status: "Waiting", anchor: at(60) }
  },
  {
    name: "Resumed paused while scavenging → Continuing, anchor = resumedAt",
    from: stateIn("PausedWhileScavengingCluster"),
    event: { _tag: "Resumed", resumedAt: at(60) },
    changes: { status: "ContinuingClusterScavenge", anchor: at(60) }
  },
  {
    name: "Resumed when never configured → NotConfigured, no anchor",
    from: applyAll(initialState, [{ _tag: "Paused", pausedAt: at(1) }]),
    event: { _tag: "Resumed", resumedAt: at(60) },
    changes: { status: "NotConfigured" }
  },
  {
    name: "Resumed after configured while paused → Waiting, anchor = resumedAt",
    from: applyAll(initialState, [
      { _tag: "Paused", pausedAt: at(1) },
      { _tag: "ConfigurationUpdated", schedule: Every10, updatedAt: at(2) }
    ]),
    event: { _tag: "Resumed", resumedAt: at(60) },
    changes: { status: "Waiting", anchor: at(60) }
  }
]

describe("applying an event", () => {
  it.each(rows.map((r) => [r.name, r] as const))("%s", (_name, row) => {
    expect(apply(row.from, row.event)).toStrictEqual({ ...row.from, ...row.changes })
  })

  it("a paused NotConfigured state stays paused when configured", () => {
    const paused = applyAll(initialState, [{ _tag: "Paused", pausedAt: at(1) }])
    expect(apply(paused, { _tag: "ConfigurationUpdated", schedule: Every10, updatedAt: at(2) }).status).toBe(
      "PausedWhileIdle"
    )
  })
})

describe("every transition, end to end", () => {
  const walk = (events: ReadonlyArray<AutoScavengeEvent>): ReadonlyArray<Status> => {
    const statuses: Array<Status> = []
    events.reduce((s, e) => {
      const next = apply(s, e)
      statuses.push(next.status)
      return next
    }, initialState)
    return statuses
  }
  const configure = (m: number): AutoScavengeEvent => ({
    _tag: "ConfigurationUpdated",
    schedule: Every10,
    updatedAt: at(m)
  })
  const start = (m: number, members = [A, B]): AutoScavengeEvent => ({
    _tag: "ClusterScavengeStarted",
    clusterScavengeId: CycleId,
    members,
    startedAt: at(m)
  })
  const designate = (n = A, m = 0): AutoScavengeEvent => ({ _tag: "NodeDesignated", nodeId: n, designatedAt: at(m) })
  const started = (n = A, id = "s", m = 0): AutoScavengeEvent => ({
    _tag: "NodeScavengeStarted",
    nodeId: n,
    scavengeId: id,
    startedAt: at(m)
  })
  const completed = (n = A, m = 0): AutoScavengeEvent => ({
    _tag: "NodeScavengeCompleted",
    nodeId: n,
    completedAt: at(m),
    result: "Success"
  })

  const transitions: ReadonlyArray<readonly [string, ReadonlyArray<AutoScavengeEvent>, ReadonlyArray<Status>]> = [
    ["NotConfigured → Waiting: configure", [configure(0)], ["Waiting"]],
    [
      "NotConfigured → Paused → Resume → NotConfigured",
      [
        { _tag: "Paused", pausedAt: at(0) },
        { _tag: "Resumed", resumedAt: at(1) }
      ],
      ["PausedWhileIdle", "NotConfigured"]
    ],
    [
      "NotConfigured → Paused, configured meanwhile → Resume → Waiting",
      [{ _tag: "Paused", pausedAt: at(0) }, configure(1), { _tag: "Resumed", resumedAt: at(2) }],
      ["PausedWhileIdle", "PausedWhileIdle", "Waiting"]
    ],
    ["Waiting → InProgress: a cycle starts", [configure(0), start(10)], ["Waiting", "ContinuingClusterScavenge"]],
    [
      "a whole cycle: Continuing → Starting → Monitoring → Continuing … → Waiting",
      [
        configure(0),
        start(10),
        designate(A),
        started(A),
        completed(A),
        designate(B),
        started(B, "s2"),
        completed(B),
        { _tag: "ClusterScavengeCompleted", clusterScavengeId: CycleId, members: [A, B], completedAt: at(20) }
      ],
      [
        "Waiting",
        "ContinuingClusterScavenge",
        "StartingNodeScavenge",
        "MonitoringNodeScavenge",
        "ContinuingClusterScavenge",
        "StartingNodeScavenge",
        "MonitoringNodeScavenge",
        "ContinuingClusterScavenge",
        "Waiting"
      ]
    ],
    ["Waiting → Paused (idle)", [configure(0), { _tag: "Paused", pausedAt: at(1) }], ["Waiting", "PausedWhileIdle"]],
    [
      "Continuing → Paused (while scavenging)",
      [configure(0), start(10), { _tag: "Paused", pausedAt: at(11) }],
      ["Waiting", "ContinuingClusterScavenge", "PausedWhileScavengingCluster"]
    ],
    [
      "Starting → Pausing → Paused → Resume → Continuing",
      [
        configure(0),
        start(10),
        designate(A),
        { _tag: "PauseRequested", requestedAt: at(11) },
        { _tag: "Paused", pausedAt: at(12) },
        { _tag: "Resumed", resumedAt: at(13) }
      ],
      [
        "Waiting",
        "ContinuingClusterScavenge",
        "StartingNodeScavenge",
        "Pausing",
        "PausedWhileScavengingCluster",
        "ContinuingClusterScavenge"
      ]
    ],
    [
      "Monitoring → Pausing → (designated node removed) Pausing → Paused",
      [
        configure(0),
        start(10),
        designate(A),
        started(A),
        { _tag: "PauseRequested", requestedAt: at(11) },
        { _tag: "ClusterMembersChanged", added: [], removed: [A] },
        { _tag: "Paused", pausedAt: at(12) }
      ],
      [
        "Waiting",
        "ContinuingClusterScavenge",
        "StartingNodeScavenge",
        "MonitoringNodeScavenge",
        "Pausing",
        "Pausing",
        "PausedWhileScavengingCluster"
      ]
    ],
    [
      "Paused (idle) → Resume → Waiting",
      [configure(0), { _tag: "Paused", pausedAt: at(1) }, { _tag: "Resumed", resumedAt: at(2) }],
      ["Waiting", "PausedWhileIdle", "Waiting"]
    ],
    [
      "Monitoring → (restarted node) re-designated → Starting",
      [configure(0), start(10), designate(A), started(A), designate(A)],
      ["Waiting", "ContinuingClusterScavenge", "StartingNodeScavenge", "MonitoringNodeScavenge", "StartingNodeScavenge"]
    ]
  ]

  it.each(transitions)("%s", (_name, events, statuses) => {
    expect(walk(events)).toEqual(statuses)
  })

  it("the next cycle counts from the completion, skipping occurrences that fell during the cycle", () => {
    const state = applyAll(initialState, [
      configure(0),
      start(10, [A]),
      designate(A),
      started(A),
      completed(A),
      { _tag: "ClusterScavengeCompleted", clusterScavengeId: CycleId, members: [A], completedAt: at(47) }
    ])
    expect(statusOf(state, at(47), everyMinutes).timeUntilNextCycleMillis).toBe(3 * Minute)
  })

  it("a cycle whose start aged out of the stream: the events left of it leave no cycle behind", () => {
    const rebuilt = applyAll(initialState, [
      configure(0),
      designate(A, 1),
      started(A, "s", 2),
      { _tag: "PauseRequested", requestedAt: at(3) },
      { _tag: "Paused", pausedAt: at(4) },
      { _tag: "Initialized", at: at(50) }
    ])
    expect(rebuilt).toEqual({ ...applyAll(initialState, [configure(0)]), status: "PausedWhileIdle", anchor: at(50) })
  })

  it("the public state of each status", () => {
    expect(AllStatuses.map((s) => [s, publicStateOf(s)])).toEqual([
      ["NotConfigured", "NotConfigured"],
      ["Waiting", "Waiting"],
      ["PausedWhileIdle", "Paused"],
      ["ContinuingClusterScavenge", "InProgress"],
      ["StartingNodeScavenge", "InProgress"],
      ["MonitoringNodeScavenge", "InProgress"],
      ["Pausing", "Pausing"],
      ["PausedWhileScavengingCluster", "Paused"]
    ])
  })
})

describe("user commands: the events recorded and the reply, in every status", () => {
  const now = at(70)
  const done: CommandReply = { _tag: "Done" }
  const accepted: CommandReply = { _tag: "Accepted" }
  const paused: AutoScavengeEvent = { _tag: "Paused", pausedAt: now }
  const pauseRequested: AutoScavengeEvent = { _tag: "PauseRequested", requestedAt: now }
  const resumed: AutoScavengeEvent = { _tag: "Resumed", resumedAt: now }
  const pausing: CommandReply = { _tag: "Rejected", message: "Auto scavenge process is currently pausing" }

  const table: Record<
    Status,
    {
      readonly Pause: readonly [ReadonlyArray<AutoScavengeEvent>, CommandReply]
      readonly Resume: readonly [ReadonlyArray<AutoScavengeEvent>, CommandReply]
    }
  > = {
    NotConfigured: { Pause: [[paused], done], Resume: [[], done] },
    Waiting: { Pause: [[paused], done], Resume: [[], done] },
    PausedWhileIdle: { Pause: [[], done], Resume: [[resumed], done] },
    ContinuingClusterScavenge: { Pause: [[paused], done], Resume: [[], done] },
    StartingNodeScavenge: { Pause: [[pauseRequested], accepted], Resume: [[], done] },
    MonitoringNodeScavenge: { Pause: [[pauseRequested], accepted], Resume: [[], done] },
    Pausing: { Pause: [[], accepted], Resume: [[], pausing] },
    PausedWhileScavengingCluster: { Pause: [[], done], Resume: [[resumed], done] }
  }

  const cases = AllStatuses.flatMap((status) =>
    (["Configure", "Pause", "Resume", "GetStatus"] as const).map((command) => [status, command] as const)
  )

  it.each(cases)("%s: %s", (status, commandTag) => {
    const state = stateIn(status)
    const command: UserCommand =
      commandTag === "Configure" ? { _tag: "Configure", schedule: "every 5" } : { _tag: commandTag }
    const decision = decide(state, command, now, everyMinutes)
    switch (commandTag) {
      case "Configure":
        expect(decision).toEqual({
          events: [{ _tag: "ConfigurationUpdated", schedule: "every 5", updatedAt: now }],
          reply: done
        })
        break
      case "Pause":
      case "Resume": {
        const [events, reply] = table[status][commandTag]
        expect(decision).toEqual({ events, reply })
        break
      }
      case "GetStatus":
        expect(decision).toEqual({ events: [], reply: { _tag: "Status", status: statusOf(state, now, everyMinutes) } })
        expect(decision.reply._tag === "Status" && decision.reply.status.state).toBe(publicStateOf(status))
        expect(decision.reply._tag === "Status" && decision.reply.status.schedule).toBe(
          status === "NotConfigured" ? null : Every10
        )
        break
    }
  })

  it("a command does not change the state by itself: its events do, once recorded", () => {
    const state = stateIn("MonitoringNodeScavenge")
    const copy = structuredClone(state)
    decide(state, { _tag: "Pause" }, now, everyMinutes)
    expect(state).toEqual(copy)
  })
})

describe("time until the next cycle", () => {
  const withCycle: ReadonlyArray<Status> = [
    "ContinuingClusterScavenge",
    "StartingNodeScavenge",
    "MonitoringNodeScavenge",
    "Pausing",
    "PausedWhileScavengingCluster"
  ]

  it.each(withCycle)("%s: a cycle exists → 0", (status) => {
    // Long before anything is due, so only the rule can give 0.
    expect(statusOf(stateIn(status), at(10) + 1, everyMinutes).timeUntilNextCycleMillis).toBe(0)
  })

  it("no schedule → null", () => {
    expect(statusOf(stateIn("NotConfigured"), at(3), everyMinutes)).toEqual({
      state: "NotConfigured",
      schedule: null,
      timeUntilNextCycleMillis: null
    })
    const pausedUnconfigured = applyAll(initialState, [{ _tag: "Paused", pausedAt: at(1) }])
    expect(statusOf(pausedUnconfigured, at(3), everyMinutes).timeUntilNextCycleMillis).toBeNull()
  })

  it("Waiting → next(anchor) − now", () => {
    // Configured at 0 (anchor 0): next at 10; now 3 → 7 minutes.
    expect(statusOf(stateIn("Waiting"), at(3), everyMinutes)).toEqual({
      state: "Waiting",
      schedule: Every10,
      timeUntilNextCycleMillis: 7 * Minute
    })
    // The anchor, not now, is the base: an anchor at 25 gives next 30, seen from 22 → 8 minutes.
    const resumed = applyAll(stateIn("PausedWhileIdle"), [{ _tag: "Resumed", resumedAt: at(25) }])
    expect(statusOf(resumed, at(22), everyMinutes).timeUntilNextCycleMillis).toBe(8 * Minute)
  })

  it("PausedWhileIdle → next(now) − now, as if resumed now", () => {
    // Anchor 0 would say next at 10, i.e. overdue; from now (34) the next is 40.
    expect(statusOf(stateIn("PausedWhileIdle"), at(34), everyMinutes)).toEqual({
      state: "Paused",
      schedule: Every10,
      timeUntilNextCycleMillis: 6 * Minute
    })
  })

  it("an overdue Waiting is clamped to 0", () => {
    expect(statusOf(stateIn("Waiting"), at(34), everyMinutes).timeUntilNextCycleMillis).toBe(0)
  })

  it("a schedule that never fires again → null", () => {
    const never = applyAll(initialState, [{ _tag: "ConfigurationUpdated", schedule: "never", updatedAt: at(0) }])
    expect(statusOf(never, at(3), everyMinutes).timeUntilNextCycleMillis).toBeNull()
  })
})
