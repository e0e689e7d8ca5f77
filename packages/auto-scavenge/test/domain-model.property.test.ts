/**
 * The state machine driven as the leader drives it, over random histories of a small cluster: gossip that
 * changes (members replaced, read-only replicas, an unhealthy cluster, leadership moving), user commands,
 * time passing, and node scavenges that finish, fail to start, go unreachable or restart. After every step
 * the rules that must always hold are checked, and a leader rebuilt from the persisted events must hold the
 * state the live leader holds.
 *
 * VELLUM_AUTO_SCAVENGE_RUNS sets the number of histories (default 150), VELLUM_AUTO_SCAVENGE_SEED their seed.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  afterPoll,
  afterStart,
  afterStop,
  apply,
  applyAll,
  assess,
  decide,
  initialState,
  isHealthy,
  nodeKey,
  onGossip,
  remainingMembers,
  sameNode,
  type AutoScavengeEvent,
  type AutoScavengeState,
  type ClusterView,
  type NodeId,
  type NodeScavengeResult,
  type PollOutcome,
  type StartOutcome,
  type StopOutcome,
  type UserCommand
} from "../src/index.js"
import { everyMinutes, Minute, T0 } from "./domainFixtures.js"

const runs = Number(process.env.VELLUM_AUTO_SCAVENGE_RUNS ?? 150)
const seed = Number(process.env.VELLUM_AUTO_SCAVENGE_SEED ?? 20261127)

// --- the cluster the leader sees and talks to ---------------------------------------------------------

interface SimNode {
  id: NodeId
  instanceId: string
  voter: boolean
  checkpoint: number
  reachable: boolean
  /** What `GET /admin/scavenge/last` knows; lost when the node restarts. */
  last: { id: string; result: "InProgress" | NodeScavengeResult } | undefined
  /** The node's scavenge history stream: survives restarts. */
  history: Map<string, NodeScavengeResult | "Interrupted">
}

type Action =
  | { t: "advance"; minutes: number }
  | { t: "configure"; every: number }
  | { t: "pause" }
  | { t: "resume" }
  | { t: "status" }
  | { t: "finish"; node: number; result: NodeScavengeResult }
  | { t: "restart"; node: number; recorded: NodeScavengeResult | "Interrupted" | "none" }
  | { t: "reachable"; node: number; reachable: boolean }
  | { t: "replace"; node: number }
  | { t: "addReplica" }
  | { t: "removeReplica"; node: number }
  | { t: "unhealthy"; mode: "absent" | "noInstance" | "healthy"; node: number }
  | { t: "leaderMoves"; node: number }
  | { t: "loseStartReply" }
  | { t: "checkpoint"; node: number; value: number }

const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant("advance" as const), minutes: fc.integer({ min: 1, max: 20 }) }), weight: 6 },
  { arbitrary: fc.record({ t: fc.constant("configure" as const), every: fc.constantFrom(5, 10, 30) }), weight: 1 },
  { arbitrary: fc.constant({ t: "pause" as const }), weight: 1 },
  { arbitrary: fc.constant({ t: "resume" as const }), weight: 2 },
  { arbitrary: fc.constant({ t: "status" as const }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant("finish" as const),
      node: fc.nat(),
      result: fc.constantFrom<NodeScavengeResult>("Success", "Success", "Stopped", "Errored")
    }),
    weight: 10
  },
  {
    arbitrary: fc.record({
      t: fc.constant("restart" as const),
      node: fc.nat(),
      recorded: fc.constantFrom("Interrupted" as const, "none" as const, "Success" as const, "Errored" as const)
    }),
    weight: 2
  },
  {
    arbitrary: fc.record({
      t: fc.constant("reachable" as const),
      node: fc.nat(),
      reachable: fc.constantFrom(true, true, false)
    }),
    weight: 2
  },
  { arbitrary: fc.record({ t: fc.constant("replace" as const), node: fc.nat() }), weight: 1 },
  { arbitrary: fc.constant({ t: "addReplica" as const }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("removeReplica" as const), node: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant("unhealthy" as const),
      mode: fc.constantFrom("absent" as const, "noInstance" as const, "healthy" as const, "healthy" as const),
      node: fc.nat()
    }),
    weight: 2
  },
  { arbitrary: fc.record({ t: fc.constant("leaderMoves" as const), node: fc.nat() }), weight: 1 },
  { arbitrary: fc.constant({ t: "loseStartReply" as const }), weight: 1 },
  {
    arbitrary: fc.record({ t: fc.constant("checkpoint" as const), node: fc.nat(), value: fc.nat({ max: 1000 }) }),
    weight: 2
  }
)

type Written = Exclude<AutoScavengeEvent, { _tag: "Initialized" }>

/** The leader's world: the nodes, the two persisted streams, the live state, and what the checks track. */
class Model {
  now = T0
  nodes: Array<SimNode> = []
  leader: NodeId
  unhealthy: { mode: "absent" | "noInstance"; node: NodeId } | undefined
  loseNextStartReply = false
  /** Whether the user's last word was a pause (accepted) rather than a resume. */
  userPaused = false
  /** The schedule and the time its next cycle counts from, kept here by the rules rather than read from the state. */
  schedule: string | undefined
  anchor: number | undefined
  readonly configuration: Array<Written> = []
  readonly scavenges: Array<Written> = []
  state: AutoScavengeState
  private ids = 0
  private ports = 0
  /** Which node each node scavenge id was started on. */
  readonly ownerOf = new Map<string, string>()
  /** Per node of the cycle under way: completions recorded since it (last) joined the cycle. */
  private completions = new Map<string, number>()
  readonly completedCycles: Array<string> = []

  constructor(
    readonly clusterSize: number,
    replicas: number
  ) {
    for (let i = 0; i < clusterSize; i++) this.nodes.push(this.newNode(true))
    for (let i = 0; i < replicas; i++) this.nodes.push(this.newNode(false))
    this.leader = this.nodes[0]!.id
    this.state = this.rehydrate()
  }

  private newNode(voter: boolean): SimNode {
    const n = this.ports++
    return {
      id: { address: `10.0.${voter ? 0 : 1}.${n}`, port: 2113 + n },
      instanceId: `instance-${n}`,
      voter,
      checkpoint: (n * 37) % 500,
      reachable: true,
      last: undefined,
      history: new Map()
    }
  }

  private nextId(prefix: string) {
    return `${prefix}-${++this.ids}`
  }

  node(id: NodeId): SimNode | undefined {
    return this.nodes.find((n) => sameNode(n.id, id))
  }

  pick(index: number, filter: (n: SimNode) => boolean = () => true): SimNode | undefined {
    const candidates = this.nodes.filter(filter)
    return candidates.length === 0 ? undefined : candidates[index % candidates.length]
  }

  view(): ClusterView {
    const hidden = this.unhealthy
    return {
      self: this.leader,
      clusterSize: this.clusterSize,
      members: this.nodes
        .filter((n) => !(hidden?.mode === "absent" && sameNode(n.id, hidden.node)))
        .map((n) => ({
          nodeId: n.id,
          instanceId: hidden?.mode === "noInstance" && sameNode(n.id, hidden.node) ? "" : n.instanceId,
          isLeader: sameNode(n.id, this.leader),
          isReadOnlyReplica: !n.voter,
          writerCheckpoint: n.checkpoint
        }))
    }
  }

  /** What a new leader loads: the last configuration, the events after the last completed cycle, Initialized. */
  rehydrate(): AutoScavengeState {
    let lastCompleted = this.scavenges.length - 1
    while (lastCompleted >= 0 && this.scavenges[lastCompleted]!._tag !== "ClusterScavengeCompleted") lastCompleted--
    const config = this.configuration.at(-1)
    return applyAll(initialState, [
      ...(config === undefined ? [] : [config]),
      ...this.scavenges.slice(lastCompleted + 1),
      { _tag: "Initialized", at: this.now }
    ])
  }

  // --- recording events, with the checks each kind of event must pass -------------------------------

  record(events: ReadonlyArray<AutoScavengeEvent>) {
    for (const event of events) {
      expect(event._tag).not.toBe("Initialized")
      this.checkBeforeRecording(this.state, event as Written)
      ;(event._tag === "ConfigurationUpdated" ? this.configuration : this.scavenges).push(event as Written)
      const before = this.state
      this.state = apply(before, event)
      this.trackCompletions(before, event as Written)
      this.trackSchedule(before, event as Written)
      checkState(this.state, this.ownerOf)
    }
  }

  /** A cycle counts from the last configuration, completed cycle, resume or new leader, whichever came last. */
  private trackSchedule(before: AutoScavengeState, event: Written) {
    if (event._tag === "ConfigurationUpdated") {
      this.schedule = event.schedule
      this.anchor = event.updatedAt
    } else if (event._tag === "ClusterScavengeCompleted" && before.clusterScavenge?.id === event.clusterScavengeId)
      this.anchor = event.completedAt
    else if (event._tag === "Resumed" && this.schedule !== undefined) this.anchor = event.resumedAt
  }

  private dueAt(): number | undefined {
    return this.schedule === undefined ? undefined : everyMinutes(this.schedule, this.anchor!)
  }

  private checkBeforeRecording(s: AutoScavengeState, event: Written) {
    const view = this.view()
    const paused =
      s.status === "PausedWhileIdle" || s.status === "PausedWhileScavengingCluster" || s.status === "Pausing"
    switch (event._tag) {
      case "ClusterScavengeStarted":
        expect(isHealthy(view), "a cycle starts only in a healthy cluster").toBe(true)
        expect(this.userPaused, "no cycle starts while paused").toBe(false)
        expect(s.status, "a cycle starts only from Waiting").toBe("Waiting")
        expect(this.now, "a cycle starts only when due").toBeGreaterThanOrEqual(this.dueAt()!)
        expect(event.members.map(nodeKey), "a cycle covers every member in gossip, replicas too").toEqual(
          view.members.map((m) => nodeKey(m.nodeId))
        )
        break
      case "NodeDesignated": {
        expect(paused || this.userPaused, "nobody is designated while paused").toBe(false)
        expect(isHealthy(view) || sameNode(event.nodeId, s.designated), "a new node is picked only when healthy").toBe(
          true
        )
        expect(
          s.designated === undefined || sameNode(s.designated, event.nodeId),
          "one designated node at a time"
        ).toBe(true)
        const cycle = s.clusterScavenge
        expect(cycle).toBeDefined()
        const remaining = remainingMembers(cycle!)
        expect(
          remaining.some((n) => sameNode(n, event.nodeId)),
          "only a member not yet scavenged"
        ).toBe(true)
        // A pick, not a node designated again after it restarted (leadership may have moved to it meanwhile).
        if (s.designated === undefined && sameNode(event.nodeId, this.leader))
          expect(remaining.map(nodeKey), "the leader only when it is the last left").toEqual([nodeKey(this.leader)])
        if (s.designated === undefined) {
          const checkpoints = view.members
            .filter((m) => !m.isLeader && remaining.some((n) => sameNode(n, m.nodeId)))
            .map((m) => m.writerCheckpoint)
          const picked = view.members.find((m) => sameNode(m.nodeId, event.nodeId))!.writerCheckpoint
          if (!sameNode(event.nodeId, this.leader))
            expect(picked, "the follower furthest behind").toBe(Math.min(...checkpoints))
        }
        break
      }
      case "NodeScavengeCompleted":
        if (sameNode(event.nodeId, s.designated)) {
          expect(["Success", "Stopped", "Errored"], "a node is done with how its scavenge ended").toContain(
            event.result
          )
          expect(this.node(event.nodeId)!.history.get(s.nodeScavengeId!), "the result its scavenge ended with").toBe(
            event.result
          )
        }
        break
      case "NodeScavengeStarted":
        expect(s.status, "a node scavenge is recorded only while starting it").toBe("StartingNodeScavenge")
        expect(this.userPaused, "no node scavenge starts while paused").toBe(false)
        break
      case "ClusterMembersChanged":
        expect(isHealthy(view), "membership is recorded only when healthy").toBe(true)
        expect(s.clusterScavenge, "membership is recorded only during a cycle").toBeDefined()
        break
      case "ClusterScavengeCompleted":
        expect(isHealthy(view), "a cycle completes only in a healthy cluster").toBe(true)
        break
      default:
        break
    }
  }

  private trackCompletions(before: AutoScavengeState, event: Written) {
    switch (event._tag) {
      case "ClusterScavengeStarted":
        this.completions = new Map(event.members.map((n) => [nodeKey(n), 0]))
        break
      case "ClusterMembersChanged":
        for (const n of event.removed) this.completions.delete(nodeKey(n))
        for (const n of event.added) if (!this.completions.has(nodeKey(n))) this.completions.set(nodeKey(n), 0)
        break
      case "NodeScavengeCompleted":
        if (sameNode(before.designated, event.nodeId)) {
          const key = nodeKey(event.nodeId)
          this.completions.set(key, (this.completions.get(key) ?? 0) + 1)
        }
        break
      case "ClusterScavengeCompleted":
        if (before.clusterScavenge?.id === event.clusterScavengeId) {
          expect(
            Object.fromEntries(event.members.map((n) => [nodeKey(n), this.completions.get(nodeKey(n))])),
            "every member of a completed cycle completed exactly once"
          ).toEqual(Object.fromEntries(event.members.map((n) => [nodeKey(n), 1])))
          this.completedCycles.push(event.clusterScavengeId)
        }
        break
      default:
        break
    }
  }

  // --- the driver: a command or a gossip tick, then assess until it waits ------------------------------

  command(command: UserCommand) {
    const decision = decide(this.state, command, this.now, everyMinutes)
    this.record(decision.events)
    if (command._tag === "Pause" && decision.reply._tag !== "Rejected") this.userPaused = true
    if (command._tag === "Resume" && decision.reply._tag === "Done") this.userPaused = false
    if (command._tag === "GetStatus" && decision.reply._tag === "Status") {
      const millis = decision.reply.status.timeUntilNextCycleMillis
      if (this.state.clusterScavenge !== undefined) expect(millis).toBe(0)
      else if (this.schedule === undefined) expect(millis).toBeNull()
      else if (this.userPaused) expect(millis).toBe(everyMinutes(this.schedule, this.now)! - this.now)
      else expect(millis).toBe(Math.max(0, this.dueAt()! - this.now))
    }
    this.assessUntilWaiting()
  }

  gossip() {
    this.record(onGossip(this.state, this.view()))
    this.assessUntilWaiting()
  }

  /** A new leader: the old one's state is gone; the new one loads what was persisted. */
  changeLeader(to: NodeId) {
    this.leader = to
    this.state = this.rehydrate()
    // Cycles missed while no node led are skipped: the new leader counts from now.
    if (this.schedule !== undefined) this.anchor = this.now
    checkState(this.state, this.ownerOf)
  }

  assessUntilWaiting() {
    for (let i = 0; i < 100; i++) {
      const s = this.state
      const step = assess(s, {
        view: this.view(),
        now: this.now,
        next: everyMinutes,
        newClusterScavengeId: () => this.nextId("cycle")
      })
      switch (step._tag) {
        case "Wait":
          if (s.status === "Waiting" && isHealthy(this.view()))
            expect(this.now, "a due cycle in a healthy cluster starts").toBeLessThan(this.dueAt() ?? Infinity)
          return
        case "Emit":
          expect(step.events.length).toBeGreaterThan(0)
          this.record(step.events)
          break
        case "Resign": {
          expect(s.status).toBe("StartingNodeScavenge")
          expect(sameNode(s.designated, this.leader)).toBe(true)
          const other = this.view().members.find((m) => !m.isReadOnlyReplica && m.instanceId !== "" && !m.isLeader)
          expect(other, "a cluster that asks its leader to resign has another voter").toBeDefined()
          this.changeLeader(other!.nodeId)
          break
        }
        case "StartNodeScavenge": {
          expect(s.status, "a node scavenge is started only while starting").toBe("StartingNodeScavenge")
          expect(this.userPaused, "no node scavenge is started while paused").toBe(false)
          expect(sameNode(step.node, s.designated)).toBe(true)
          const events = afterStart(s, step.node, this.start(step.node), this.now)
          if (events.length === 0) return
          this.record(events)
          break
        }
        case "PollNodeScavenge": {
          expect(s.status).toBe("MonitoringNodeScavenge")
          expect(this.ownerOf.get(step.scavengeId), "the scavenge polled runs on the designated node").toBe(
            nodeKey(step.node)
          )
          const events = afterPoll(s, step.node, this.poll(step.node, step.scavengeId), this.now)
          if (events.length === 0) return
          this.record(events)
          break
        }
        case "StopNodeScavenge": {
          expect(s.status).toBe("Pausing")
          if (step.scavengeId !== undefined) expect(this.ownerOf.get(step.scavengeId)).toBe(nodeKey(step.node))
          const events = afterStop(s, this.stop(step.node, step.scavengeId), this.now)
          if (events.length === 0) return
          this.record(events)
          break
        }
      }
    }
    throw new Error("assess did not settle within 100 steps")
  }

  private start(id: NodeId): StartOutcome {
    const node = this.node(id)
    if (node === undefined || !node.reachable) return { _tag: "Failed", message: "unreachable" }
    if (node.last?.result === "InProgress") return { _tag: "Failed", message: "already running" }
    const running = this.nodes.filter((n) => n.last?.result === "InProgress")
    expect(
      running.map((n) => nodeKey(n.id)),
      "one node scavenge at a time"
    ).toEqual([])
    const scavengeId = this.nextId("scavenge")
    node.last = { id: scavengeId, result: "InProgress" }
    this.ownerOf.set(scavengeId, nodeKey(id))
    if (this.loseNextStartReply) {
      this.loseNextStartReply = false
      return { _tag: "Failed", message: "timed out" }
    }
    return { _tag: "Started", scavengeId }
  }

  private poll(id: NodeId, scavengeId: string): PollOutcome {
    const node = this.node(id)
    if (node === undefined || !node.reachable) return { _tag: "Unreachable", message: "unreachable" }
    if (node.last === undefined) {
      const recorded = node.history.get(scavengeId)
      return { _tag: "Restarted", recorded }
    }
    return { _tag: "Last", scavengeId: node.last.id, result: node.last.result }
  }

  private stop(id: NodeId, scavengeId: string | undefined): StopOutcome {
    const node = this.node(id)
    if (node === undefined || !node.reachable) return { failed: "unreachable" }
    const last = node.last
    if (last === undefined || last.result !== "InProgress" || (scavengeId !== undefined && last.id !== scavengeId))
      return "NotFound"
    node.last = { id: last.id, result: "Stopped" }
    node.history.set(last.id, "Stopped")
    return "Stopped"
  }

  // --- the random history's steps -----------------------------------------------------------------------

  run(a: Action) {
    switch (a.t) {
      case "advance":
        this.now += a.minutes * Minute
        return this.gossip()
      case "configure":
        return this.command({ _tag: "Configure", schedule: `every ${a.every}` })
      case "pause":
        return this.command({ _tag: "Pause" })
      case "resume":
        return this.command({ _tag: "Resume" })
      case "status":
        return this.command({ _tag: "GetStatus" })
      case "finish": {
        const node = this.pick(a.node, (n) => n.last?.result === "InProgress")
        if (node !== undefined) {
          node.last = { id: node.last!.id, result: a.result }
          node.history.set(node.last.id, a.result)
        }
        return this.gossip()
      }
      case "restart": {
        const node = this.pick(a.node)!
        if (node.last?.result === "InProgress" && a.recorded !== "none") node.history.set(node.last.id, a.recorded)
        node.last = undefined
        node.reachable = true
        return this.gossip()
      }
      case "reachable": {
        const node = this.pick(a.node, (n) => !sameNode(n.id, this.leader))
        if (node !== undefined) node.reachable = a.reachable
        return this.gossip()
      }
      case "replace": {
        // A non-leader comes back at another endpoint: another node to auto-scavenge.
        const index = this.nodes.findIndex((n) => n === this.pick(a.node, (m) => !sameNode(m.id, this.leader)))
        if (index >= 0) {
          const old = this.nodes[index]!
          const fresh = this.newNode(old.voter)
          this.nodes[index] = fresh
          if (sameNode(this.unhealthy?.node, old.id)) this.unhealthy = { ...this.unhealthy!, node: fresh.id }
        }
        return this.gossip()
      }
      case "addReplica":
        if (this.nodes.filter((n) => !n.voter).length < 2) this.nodes.push(this.newNode(false))
        return this.gossip()
      case "removeReplica": {
        const replica = this.pick(a.node, (n) => !n.voter)
        if (replica !== undefined) this.nodes = this.nodes.filter((n) => n !== replica)
        return this.gossip()
      }
      case "unhealthy": {
        const voter = this.pick(a.node, (n) => n.voter && !sameNode(n.id, this.leader))
        this.unhealthy = a.mode === "healthy" || voter === undefined ? undefined : { mode: a.mode, node: voter.id }
        return this.gossip()
      }
      case "leaderMoves": {
        const to = this.pick(
          a.node,
          (n) => n.voter && !sameNode(n.id, this.leader) && !sameNode(n.id, this.unhealthy?.node)
        )
        if (to !== undefined) this.changeLeader(to.id)
        return this.gossip()
      }
      case "loseStartReply":
        this.loseNextStartReply = true
        return this.gossip()
      case "checkpoint": {
        this.pick(a.node)!.checkpoint = a.value
        return this.gossip()
      }
    }
  }

  /** A leader rebuilt now from the streams holds the live state (but its anchor, which Initialized sets). */
  checkRehydration() {
    const pausedStatus = ["Pausing", "PausedWhileIdle", "PausedWhileScavengingCluster"].includes(this.state.status)
    expect(pausedStatus, "paused (or pausing) exactly when the user paused").toBe(this.userPaused)
    const rebuilt = this.rehydrate()
    expect(rebuilt.anchor).toBe(rebuilt.schedule === undefined ? undefined : this.now)
    expect({ ...rebuilt, anchor: 0 }).toStrictEqual({ ...this.state, anchor: 0 })
  }

  /** Everything healed, resumed, every scavenge finishing: the cycle under way, or the next one, completes. */
  settle() {
    this.unhealthy = undefined
    this.loseNextStartReply = false
    for (const n of this.nodes) n.reachable = true
    const before = this.completedCycles.length
    for (let i = 0; i < 300; i++) {
      if (this.completedCycles.length > before) return
      if (this.state.status === "PausedWhileScavengingCluster" || this.state.status === "PausedWhileIdle")
        this.command({ _tag: "Resume" })
      for (const n of this.nodes)
        if (n.last?.result === "InProgress") {
          n.last = { id: n.last.id, result: "Success" }
          n.history.set(n.last.id, "Success")
        }
      this.now += Minute
      this.gossip()
    }
    throw new Error(`no cycle completed once all was well; the state is ${JSON.stringify(this.state)}`)
  }
}

/** The invariant of each status, and the designation's consistency with the cycle. */
const checkState = (s: AutoScavengeState, ownerOf: ReadonlyMap<string, string>) => {
  const cycle = s.clusterScavenge !== undefined
  const designated = s.designated !== undefined
  const shape = { cycle, designated, scavengeId: s.nodeScavengeId !== undefined }
  switch (s.status) {
    case "NotConfigured":
      expect(s.schedule).toBeUndefined()
      expect({ cycle, designated }).toEqual({ cycle: false, designated: false })
      break
    case "Waiting":
      expect(s.schedule).toBeDefined()
      expect({ cycle, designated }).toEqual({ cycle: false, designated: false })
      break
    case "PausedWhileIdle":
      expect({ cycle, designated }).toEqual({ cycle: false, designated: false })
      break
    case "ContinuingClusterScavenge":
    case "PausedWhileScavengingCluster":
      expect({ cycle, designated }).toEqual({ cycle: true, designated: false })
      break
    case "StartingNodeScavenge":
      expect({ cycle, designated }).toEqual({ cycle: true, designated: true })
      expect(shape.scavengeId, "a node being started has no scavenge id yet").toBe(false)
      break
    case "MonitoringNodeScavenge":
      expect(shape).toEqual({ cycle: true, designated: true, scavengeId: true })
      break
    case "Pausing":
      expect(cycle).toBe(true)
      break
  }
  if (s.clusterScavenge !== undefined) {
    const members = new Set(s.clusterScavenge.members.map(nodeKey))
    expect(members.size, "no member twice").toBe(s.clusterScavenge.members.length)
    for (const n of s.clusterScavenge.scavenged) expect(members.has(nodeKey(n)), "scavenged ⊆ members").toBe(true)
    if (s.designated !== undefined) {
      expect(members.has(nodeKey(s.designated)), "the designated node is a member").toBe(true)
      expect(remainingMembers(s.clusterScavenge).map(nodeKey), "the designated node is not done").toContain(
        nodeKey(s.designated)
      )
    }
  }
  if (s.designated !== undefined && s.nodeScavengeId !== undefined)
    expect(ownerOf.get(s.nodeScavengeId), "the recorded scavenge runs on the designated node").toBe(
      nodeKey(s.designated)
    )
}

describe("the state machine driven over random cluster histories", () => {
  it("keeps its invariants, and a new leader rebuilds the live state", () => {
    let during = 0
    fc.assert(
      fc.property(
        fc.constantFrom(1, 3, 3, 5),
        fc.integer({ min: 0, max: 2 }),
        fc.array(action, { minLength: 10, maxLength: 100, size: "max" }),
        (clusterSize, replicas, actions) => {
          const model = new Model(clusterSize, replicas)
          model.gossip()
          model.command({ _tag: "Configure", schedule: "every 10" })
          for (const a of actions) {
            model.run(a)
            model.checkRehydration()
          }
          during += model.completedCycles.length
          model.settle()
          model.checkRehydration()
        }
      ),
      { numRuns: runs, seed }
    )
    // The histories reach whole cycles before they settle, not only their beginnings.
    expect(during).toBeGreaterThan(runs / 2)
  })
})
