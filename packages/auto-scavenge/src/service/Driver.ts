/**
 * The driver: runs the state machine on the leader. One fiber takes jobs from a queue of 32 — a gossip
 * tick, or a user's command — one at a time, so the state has one writer:
 *
 * - a gossip tick (every gossip interval; a single node ticks itself every 5 s) reads this node's view of
 *   the cluster. On becoming leader the state is rebuilt from the streams; on ceasing to lead it is
 *   dropped. The leader then records membership changes and assesses.
 * - a command is decided, its events recorded and applied, then answered, and then the leader assesses.
 * - assessing repeats while it records events, and ends when it waits or an action gets no new events:
 *   the next tick tries again (a node that did not answer, a scavenge still running).
 *
 * On a node that does not lead, commands go to the leader over the internal channel (`forward.ts`).
 * A write refused because the node no longer leads answers 500 "Not leader" and the driver goes on; any
 * other failure to record stops auto-scavenge on this node until it restarts (it cannot tell what it
 * recorded), and every later command gets 500.
 */
import { Clock, Deferred, Effect, Queue, type Scope } from "effect"
import type { ClusterStatusService, MemberInfo } from "@vellum/cluster"
import { formatTimeSpan, type ScavengeProgress, type ScavengerService } from "@vellum/scavenge"
import { randomUuid, type EventStoreService } from "@vellum/storage"
import type { AutoScavengeFigures, AutoScavengeReply, AutoScavengeService } from "../AutoScavenge.js"
import { applyAll } from "../domain/apply.js"
import { afterPoll, afterStart, afterStop, assess, onGossip, type PollOutcome } from "../domain/assess.js"
import type { ClusterView, GossipMember } from "../domain/ClusterView.js"
import { decide, statusOf, type CommandReply, type UserCommand } from "../domain/commands.js"
import type { AutoScavengeEvent } from "../domain/events.js"
import { nodeKey, sameNode, type NodeId } from "../domain/NodeId.js"
import type { NextOccurrence } from "../domain/Schedule.js"
import { publicStateOf, type AutoScavengeState } from "../domain/State.js"
import type { NodeScavengeCalls, ScavengerAt } from "./nodeCalls.js"
import { recordedResult } from "./scavengeHistory.js"
import { record, rehydrate, type Persisted } from "./streams.js"

export interface DriverSettings {
  /** How often the leader looks at gossip and assesses. */
  readonly tickMillis: number
  readonly next: NextOccurrence
}

export interface DriverDeps {
  readonly store: EventStoreService
  readonly cluster: ClusterStatusService
  readonly scavenger: ScavengerService
  readonly calls: NodeScavengeCalls
  /** This node's own gossip record now. */
  readonly selfRecord: Effect.Effect<MemberInfo>
}

export interface Driver extends AutoScavengeService {
  /** Runs a command here, as the leader: "Node is not the leader" when this node's driver does not lead. */
  readonly executeHere: (command: UserCommand) => Effect.Effect<AutoScavengeReply>
}

type Job =
  | { readonly _tag: "Tick" }
  | { readonly _tag: "Command"; readonly command: UserCommand; readonly reply: Deferred.Deferred<AutoScavengeReply> }

const QueueCapacity = 32
/** Assessing stops after this many recorded steps in a row (a cycle never needs so many between ticks). */
const MaxStepsPerAssess = 16
const NotLeaderReply: AutoScavengeReply = { _tag: "Rejected", message: "Node is not the leader" }

const toView = (members: ReadonlyArray<MemberInfo>, self: MemberInfo, clusterSize: number): ClusterView => ({
  members: members.map((m): GossipMember => ({
    nodeId: { address: m.internalHttpEndPointIp, port: m.internalHttpEndPointPort },
    instanceId: m.instanceId,
    isLeader: m.state === "Leader",
    isReadOnlyReplica: m.isReadOnlyReplica,
    writerCheckpoint: m.writerCheckpoint
  })),
  self: { address: self.internalHttpEndPointIp, port: self.internalHttpEndPointPort },
  clusterSize
})

export const makeDriver = (settings: DriverSettings, deps: DriverDeps): Effect.Effect<Driver, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { store, cluster, calls } = deps
    const queue = yield* Queue.dropping<Job>(QueueCapacity)
    let leading: Persisted | undefined
    /** The epoch this node led in when it loaded the state: a later term loads it again. */
    let leadingEpoch = -1
    let stopped: string | undefined
    let members: ReadonlyArray<MemberInfo> = []
    let view: ClusterView | undefined
    let lastWait: string | undefined
    /** What the designated node last said of its scavenge (for the status document). */
    let nodeProgress: { readonly scavengeId: string; readonly progress: ScavengeProgress | undefined } | undefined
    const figures = {
      cyclesStarted: 0,
      cyclesCompleted: 0,
      nodeScavengesStarted: 0,
      nodeScavengesCompleted: { Success: 0, Stopped: 0, Errored: 0 }
    }

    const count = (events: ReadonlyArray<AutoScavengeEvent>) => {
      for (const e of events) {
        if (e._tag === "ClusterScavengeStarted") figures.cyclesStarted++
        else if (e._tag === "ClusterScavengeCompleted") figures.cyclesCompleted++
        else if (e._tag === "NodeScavengeStarted") figures.nodeScavengesStarted++
        else if (e._tag === "NodeScavengeCompleted") figures.nodeScavengesCompleted[e.result]++
      }
    }

    /** Records and applies; "NotLeader" or the reason auto-scavenge stopped when it could not. */
    const recordAndApply = (
      events: ReadonlyArray<AutoScavengeEvent>
    ): Effect.Effect<{ readonly ok: true } | { readonly ok: false; readonly detail: string }> =>
      Effect.gen(function* () {
        const current = leading
        if (current === undefined) return { ok: false, detail: "Not leader" } as const
        if (events.length === 0) return { ok: true } as const
        // Never through the member's forwarding: a node that only believes it leads must not record.
        const written = yield* Effect.either(record(store.leaderOnly ?? store, current.revision, events))
        if (written._tag === "Left") {
          if (written.left._tag === "NotLeaderAnyMore") {
            // Whoever leads loads the state afresh (this node too, at its next tick, if it still leads).
            leading = undefined
            yield* Effect.logInfo(`auto-scavenge: not recorded: ${written.left.message}`)
            return { ok: false, detail: "Not leader" } as const
          }
          stopped = written.left.message
          yield* Effect.logError(`auto-scavenge stopped: ${written.left.message}`)
          return { ok: false, detail: written.left.message } as const
        }
        // The state changes only once its events are recorded.
        leading = { state: applyAll(current.state, events), revision: written.right }
        count(events)
        return { ok: true } as const
      })

    const refreshView = Effect.gen(function* () {
      const self = yield* deps.selfRecord
      members = yield* cluster.members(self)
      const found = members.find((m) => m.instanceId === self.instanceId) ?? self
      view = toView(members, found, cluster.clusterSize)
      return { view, isLeader: found.state === "Leader", epoch: self.epochNumber }
    })

    const scavengerAt = (node: NodeId, current: ClusterView): ScavengerAt | undefined => {
      if (sameNode(node, current.self)) return { _tag: "Local" }
      const member = members.find(
        (m) => m.internalHttpEndPointIp === node.address && m.internalHttpEndPointPort === node.port
      )
      const internal = cluster.internal
      return member === undefined || internal === undefined
        ? undefined
        : { _tag: "Remote", node, address: internal.addressOf(member) }
    }

    const poll = (at: ScavengerAt | undefined, scavengeId: string): Effect.Effect<PollOutcome> =>
      Effect.gen(function* () {
        if (at === undefined) return { _tag: "Unreachable", message: "the node is not in gossip" } as const
        const answer = yield* calls.last(at)
        if (answer._tag === "Unreachable") return answer
        nodeProgress = { scavengeId: answer.scavengeId, progress: answer.progress }
        if (answer.scavengeId !== scavengeId && answer.result !== "Unknown")
          yield* Effect.logWarning(`auto-scavenge: the node reports scavenge ${answer.scavengeId}, not ${scavengeId}`)
        if (answer.result !== "Unknown") return { _tag: "Last", scavengeId: answer.scavengeId, result: answer.result }
        return { _tag: "Restarted", recorded: yield* recordedResult(store, scavengeId) } as const
      })

    /** Assesses until the leader waits, or an action brought nothing new. */
    const assessChain = Effect.gen(function* () {
      for (let step = 0; step < MaxStepsPerAssess && stopped === undefined; step++) {
        const current = leading
        const currentView = view
        if (current === undefined || currentView === undefined) return
        const now = yield* Clock.currentTimeMillis
        const id = yield* randomUuid
        const next = assess(current.state, {
          view: currentView,
          now,
          next: settings.next,
          newClusterScavengeId: () => id
        })
        let events: ReadonlyArray<AutoScavengeEvent>
        switch (next._tag) {
          case "Wait":
            if (next.reason !== undefined && next.reason !== lastWait)
              yield* Effect.logInfo(`auto-scavenge: ${next.reason}`)
            lastWait = next.reason
            return
          case "Emit":
            events = next.events
            break
          case "Resign":
            yield* Effect.logInfo("auto-scavenge: this leader is next; it resigns first")
            yield* cluster.resign
            return
          case "StartNodeScavenge": {
            const at = scavengerAt(next.node, currentView)
            const outcome =
              at === undefined
                ? ({ _tag: "Failed", message: "the node is not in gossip" } as const)
                : yield* calls.start(at)
            if (outcome._tag === "Failed")
              yield* Effect.logInfo(
                `auto-scavenge: starting a scavenge on ${nodeKey(next.node)} failed: ${outcome.message}`
              )
            else nodeProgress = { scavengeId: outcome.scavengeId, progress: undefined }
            events = afterStart(current.state, next.node, outcome, yield* Clock.currentTimeMillis)
            break
          }
          case "PollNodeScavenge": {
            const outcome = yield* poll(scavengerAt(next.node, currentView), next.scavengeId)
            events = afterPoll(current.state, next.node, outcome, yield* Clock.currentTimeMillis)
            break
          }
          case "StopNodeScavenge": {
            const at = scavengerAt(next.node, currentView)
            const outcome =
              at === undefined ? { failed: "the node is not in gossip" } : yield* calls.stop(at, next.scavengeId)
            events = afterStop(current.state, outcome, yield* Clock.currentTimeMillis)
            break
          }
        }
        if (events.length === 0) return
        const recorded = yield* recordAndApply(events)
        if (!recorded.ok) return
      }
    })

    const onTick = Effect.gen(function* () {
      const { view: current, isLeader, epoch } = yield* refreshView
      // Leading again in a later term: what another leader recorded meanwhile is loaded.
      if (isLeader && leading !== undefined && epoch !== leadingEpoch) leading = undefined
      if (isLeader && leading === undefined) {
        const loaded = yield* Effect.either(rehydrate(store, yield* Clock.currentTimeMillis))
        if (loaded._tag === "Left") {
          // Not fatal: this node's copy may not be readable yet; the next tick tries again.
          yield* Effect.logWarning(`auto-scavenge: cannot load its state: ${loaded.left.message}`)
          return
        }
        leading = loaded.right
        leadingEpoch = epoch
        lastWait = undefined
        yield* Effect.logInfo(`auto-scavenge: leading, ${publicStateOf(leading.state.status)}`)
      } else if (!isLeader && leading !== undefined) {
        leading = undefined
        nodeProgress = undefined
        yield* Effect.logInfo("auto-scavenge: no longer the leader; its state is dropped")
      }
      if (leading === undefined) return
      const changed = onGossip(leading.state, current)
      if (changed.length > 0 && !(yield* recordAndApply(changed)).ok) return
      yield* assessChain
    })

    const statusBody = (state: AutoScavengeState, now: number): Record<string, unknown> => {
      const status = statusOf(state, now, settings.next)
      const cycle = state.clusterScavenge
      const done = new Set(cycle?.scavenged.map(nodeKey) ?? [])
      const progress =
        nodeProgress !== undefined && nodeProgress.scavengeId === state.nodeScavengeId ? nodeProgress : undefined
      return {
        state: status.state,
        schedule: status.schedule,
        timeUntilNextCycle:
          status.timeUntilNextCycleMillis === null ? null : formatTimeSpan(status.timeUntilNextCycleMillis),
        // Vellum's additions, after the reference's three fields.
        cycle:
          cycle === undefined
            ? null
            : {
                clusterScavengeId: cycle.id,
                members: cycle.members.map((n) => ({ address: n.address, port: n.port, done: done.has(nodeKey(n)) })),
                designated: state.designated ?? null,
                nodeScavenge:
                  state.nodeScavengeId === undefined
                    ? null
                    : {
                        scavengeId: state.nodeScavengeId,
                        phase: progress?.progress?.phase ?? null,
                        done: progress?.progress?.done ?? null,
                        total: progress?.progress?.total ?? null
                      }
              }
      }
    }

    const toReply = (reply: CommandReply, now: number, state: AutoScavengeState): AutoScavengeReply =>
      reply._tag === "Status" ? { _tag: "Status", body: statusBody(state, now) } : reply

    const onCommand = (command: UserCommand): Effect.Effect<AutoScavengeReply> =>
      Effect.gen(function* () {
        // A leader whose driver has not ticked since it was elected loads its state first.
        if (leading === undefined && cluster.state() === "Leader") yield* onTick
        const current = leading
        if (current === undefined) return NotLeaderReply
        const now = yield* Clock.currentTimeMillis
        const decision = decide(current.state, command, now, settings.next)
        const recorded = yield* recordAndApply(decision.events)
        if (!recorded.ok) return { _tag: "Failed", detail: recorded.detail } as const
        return toReply(decision.reply, now, leading?.state ?? current.state)
      })

    const run = (job: Job): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (stopped !== undefined) {
          if (job._tag === "Command")
            yield* Deferred.succeed(job.reply, { _tag: "Failed", detail: "AutoScavenge is no longer running" })
          return
        }
        if (job._tag === "Tick") return yield* onTick
        yield* Deferred.succeed(job.reply, yield* onCommand(job.command))
        // Every command is followed by one assessment.
        if (stopped === undefined) yield* assessChain
      })

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(queue), run)))
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Queue.offer(queue, { _tag: "Tick" }), Effect.sleep(settings.tickMillis)))
    )

    const executeHere = (command: UserCommand): Effect.Effect<AutoScavengeReply> =>
      Effect.gen(function* () {
        if (stopped !== undefined) return { _tag: "Failed", detail: "AutoScavenge is no longer running" } as const
        const reply = yield* Deferred.make<AutoScavengeReply>()
        if (!(yield* Queue.offer(queue, { _tag: "Command", command, reply })))
          return { _tag: "Failed", detail: "AutoScavenge queue is full" } as const
        return yield* Deferred.await(reply)
      })

    const currentFigures = Effect.gen(function* () {
      const state = leading?.state
      const now = yield* Clock.currentTimeMillis
      const status = state === undefined ? undefined : statusOf(state, now, settings.next)
      return {
        state: status?.state,
        ...figures,
        nodeScavengesCompleted: { ...figures.nodeScavengesCompleted },
        cycleMembers: state?.clusterScavenge?.members.length ?? 0,
        cycleMembersDone: state?.clusterScavenge?.scavenged.length ?? 0,
        timeUntilNextCycleMillis:
          status === undefined || status.timeUntilNextCycleMillis === null || state?.clusterScavenge !== undefined
            ? undefined
            : status.timeUntilNextCycleMillis
      } satisfies AutoScavengeFigures
    })

    return { executeHere, execute: executeHere, figures: currentFigures }
  })
