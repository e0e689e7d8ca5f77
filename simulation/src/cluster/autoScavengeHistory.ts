/**
 * Auto-scavenge's record as the cluster holds it — both of its streams, read back from a member's store
 * with the log position of each event and the leader that wrote it (the leader of the epoch the position
 * lies in) — and the rules a seed's record must obey, as pure functions (the unit tests build records by
 * hand):
 *
 * - the leader is scavenged last (`checkLeaderLast`): once a leader designated itself in a cycle, no other
 *   member is designated in that cycle, but for members that joined it later;
 * - one node scavenge per member per completed cycle (`checkOneEach`): every member a completed cycle names
 *   completed exactly one node scavenge in it (a restart re-designates a node without completing it);
 * - nothing while paused (`checkNothingWhilePaused`): between a Paused and the next Resumed event, no node
 *   is designated and no node scavenge recorded as started;
 * - what was recorded happened (`checkStartsSeen`): every recorded node scavenge start names a run the
 *   member's scavenger showed;
 * - what a new leader loads is what was recorded (`checkRehydration`): the state the reference's
 *   rehydration rule gives (the last configuration, then the events after the last completed cycle, then
 *   Initialized) equals the state every event applied in log order gives — the old leader's own state,
 *   which changed only by applying what it had recorded.
 */
import { Effect } from "effect"
import {
  apply,
  applyAll,
  remainingMembers,
  AutoScavengeCodec,
  initialState,
  nodeKey,
  publicStateOf,
  type AutoScavengeEvent,
  type AutoScavengeState,
  type NodeId
} from "@vellum/auto-scavenge"
import type { EventStoreService } from "@vellum/storage"
import type { NodeScavenge } from "./nodeScavenges.js"

export interface RecordedEvent {
  readonly event: AutoScavengeEvent
  readonly position: number
  /** The member (as the checkers name it) that led when it was written; undefined if unknown. */
  readonly writer: string | undefined
}

/** Both streams' events in log order, each with the leader that wrote it (`writerAt`: position → member). */
export const readRecord = (store: EventStoreService, writerAt: (position: number) => string | undefined) =>
  Effect.gen(function* () {
    const out: Array<RecordedEvent> = []
    for (const stream of [AutoScavengeCodec.ConfigurationStream, AutoScavengeCodec.ScavengesStream]) {
      for (let from = 0; ;) {
        const page = yield* store.readStreamForward(stream, from, 256)
        if (page._tag !== "Success") break
        for (const resolved of page.events) {
          const e = resolved.event
          if (e === undefined) continue
          const event = AutoScavengeCodec.decodeEvent(e.eventType, e.data.toString("utf8"))
          if (event !== undefined) out.push({ event, position: e.logPosition, writer: writerAt(e.logPosition) })
        }
        if (page.isEndOfStream) break
        from = page.nextEventNumber
      }
    }
    return out.sort((a, b) => a.position - b.position)
  })

/** The events of each cycle, from its ClusterScavengeStarted to its ClusterScavengeCompleted (or the end). */
const cycles = (
  record: ReadonlyArray<RecordedEvent>
): Array<{ id: string; events: Array<RecordedEvent>; completed: boolean }> => {
  const out: Array<{ id: string; events: Array<RecordedEvent>; completed: boolean }> = []
  let current: (typeof out)[number] | undefined
  for (const r of record) {
    if (r.event._tag === "ClusterScavengeStarted") {
      current = { id: r.event.clusterScavengeId, events: [], completed: false }
      out.push(current)
      continue
    }
    if (current === undefined) continue
    if (r.event._tag === "ClusterScavengeCompleted" && r.event.clusterScavengeId === current.id) {
      current.completed = true
      current.events.push(r)
      current = undefined
      continue
    }
    current.events.push(r)
  }
  return out
}

/**
 * A leader designates itself afresh (not again, as the node already designated: a designated follower that
 * was elected meanwhile is re-designated on the restart path) only when every other member of the cycle is
 * done; after that, only it (again) or members that joined later are designated in the cycle.
 */
export const checkLeaderLast = (
  record: ReadonlyArray<RecordedEvent>,
  labelOf: (node: NodeId) => string
): string | undefined => {
  let state = initialState
  let leader: NodeId | undefined
  const addedSince = new Set<string>()
  for (const r of record) {
    const e = r.event
    const cycle = state.clusterScavenge
    if (e._tag === "ClusterScavengeStarted") {
      leader = undefined
      addedSince.clear()
    }
    if (e._tag === "ClusterMembersChanged" && leader !== undefined) for (const n of e.added) addedSince.add(nodeKey(n))
    if (e._tag === "NodeDesignated" && cycle !== undefined) {
      const itself = r.writer !== undefined && labelOf(e.nodeId) === r.writer
      const again = state.designated !== undefined && nodeKey(state.designated) === nodeKey(e.nodeId)
      if (leader === undefined && itself && !again) {
        const others = remainingMembers(cycle).filter((n) => nodeKey(n) !== nodeKey(e.nodeId))
        if (others.length > 0) {
          return `cycle ${cycle.id}: the leader ${nodeKey(e.nodeId)} designated itself before ${others.map(nodeKey).join(", ")} (${describeCycle(record, cycle.id)})`
        }
        leader = e.nodeId
      } else if (leader !== undefined && nodeKey(e.nodeId) !== nodeKey(leader) && !addedSince.has(nodeKey(e.nodeId))) {
        return `cycle ${cycle.id}: ${nodeKey(e.nodeId)} designated after the leader ${nodeKey(leader)} designated itself (${describeCycle(record, cycle.id)})`
      }
    }
    state = apply(state, e)
  }
  return undefined
}

/** A cycle's events in a line: what, of whom, written by which leader. */
const describeCycle = (record: ReadonlyArray<RecordedEvent>, id: string): string =>
  (cycles(record).find((c) => c.id === id)?.events ?? [])
    .map(({ event: e, writer }) => {
      const node =
        "nodeId" in e
          ? ` ${nodeKey(e.nodeId)}`
          : e._tag === "ClusterMembersChanged"
            ? ` +${e.added.map(nodeKey).join(",")} -${e.removed.map(nodeKey).join(",")}`
            : ""
      const result = e._tag === "NodeScavengeCompleted" ? ` ${e.result}` : ""
      return `${e._tag}${node}${result} by ${writer ?? "?"}`
    })
    .join("; ")

/** Every member a completed cycle names completed exactly one node scavenge in it. */
export const checkOneEach = (record: ReadonlyArray<RecordedEvent>): string | undefined => {
  for (const cycle of cycles(record)) {
    const last = cycle.events[cycle.events.length - 1]?.event
    if (!cycle.completed || last?._tag !== "ClusterScavengeCompleted") continue
    const completions = new Map<string, number>()
    for (const { event } of cycle.events) {
      if (event._tag === "NodeScavengeCompleted")
        completions.set(nodeKey(event.nodeId), (completions.get(nodeKey(event.nodeId)) ?? 0) + 1)
    }
    for (const member of last.members) {
      const n = completions.get(nodeKey(member)) ?? 0
      if (n !== 1) return `cycle ${cycle.id} completed with ${nodeKey(member)} having completed ${n} node scavenges`
    }
  }
  return undefined
}

/** Between a Paused event and the next Resumed, nothing is designated or started. */
export const checkNothingWhilePaused = (record: ReadonlyArray<RecordedEvent>): string | undefined => {
  let pausedAt: number | undefined
  for (const { event, position } of record) {
    if (event._tag === "Paused") pausedAt = position
    else if (event._tag === "Resumed") pausedAt = undefined
    else if (pausedAt !== undefined && (event._tag === "NodeDesignated" || event._tag === "NodeScavengeStarted")) {
      return `${event._tag} of ${nodeKey(event.nodeId)} at ${position} while paused (Paused at ${pausedAt})`
    }
  }
  return undefined
}

/** Every recorded node scavenge start is a run the member's scavenger showed. */
export const checkStartsSeen = (
  record: ReadonlyArray<RecordedEvent>,
  runs: ReadonlyArray<NodeScavenge>,
  labelOf: (node: NodeId) => string
): string | undefined => {
  for (const { event } of record) {
    if (event._tag !== "NodeScavengeStarted") continue
    const label = labelOf(event.nodeId)
    if (!runs.some((r) => r.node === label && r.scavengeId === event.scavengeId)) {
      return `node scavenge ${event.scavengeId} recorded as started on ${label}, whose scavenger never showed it`
    }
  }
  return undefined
}

/** The reference's rehydration rule over a record: the last configuration, the events after the last completed cycle, Initialized. */
export const rehydrated = (record: ReadonlyArray<RecordedEvent>, now: number): AutoScavengeState => {
  const configs = record.filter((r) => r.event._tag === "ConfigurationUpdated")
  const cycleEvents = record.filter((r) => r.event._tag !== "ConfigurationUpdated")
  let lastCompleted = -1
  cycleEvents.forEach((r, i) => {
    if (r.event._tag === "ClusterScavengeCompleted") lastCompleted = i
  })
  const tail = cycleEvents.slice(lastCompleted + 1).map((r) => r.event)
  const config = configs.slice(-1).map((r) => r.event)
  return applyAll(initialState, [...config, ...tail, { _tag: "Initialized", at: now }])
}

export const checkRehydration = (record: ReadonlyArray<RecordedEvent>, now: number): string | undefined => {
  const live = applyAll(initialState, [...record.map((r) => r.event), { _tag: "Initialized", at: now }])
  const loaded = rehydrated(record, now)
  const a = canonical(live)
  const b = canonical(loaded)
  return a === b ? undefined : `a new leader would load ${b}, the leaders that recorded it held ${a}`
}

/**
 * Whether a leader's status document shows the state its record gives (every event applied in order):
 * its public state, its schedule, and the cycle's members, which are done, and the designated node.
 * "same", or what differs.
 */
export const holdsRecord = (body: Readonly<Record<string, unknown>>, record: ReadonlyArray<RecordedEvent>): string => {
  const state = applyAll(
    initialState,
    record.map((r) => r.event)
  )
  const cycle = state.clusterScavenge
  const done = new Set(cycle?.scavenged.map(nodeKey) ?? [])
  const expected = {
    state: publicStateOf(state.status),
    cycle:
      cycle === undefined
        ? null
        : {
            clusterScavengeId: cycle.id,
            members: cycle.members.map((n) => ({ address: n.address, port: n.port, done: done.has(nodeKey(n)) })),
            designated: state.designated ?? null
          }
  }
  const bodyCycle = body["cycle"] as Record<string, unknown> | null | undefined
  const shown = {
    state: body["state"],
    cycle:
      bodyCycle === null || bodyCycle === undefined
        ? null
        : {
            clusterScavengeId: bodyCycle["clusterScavengeId"],
            members: bodyCycle["members"],
            designated: bodyCycle["designated"]
          }
  }
  return canonical(expected) === canonical(shown)
    ? "same"
    : `shows ${canonical(shown)}, its record gives ${canonical(expected)}`
}

/** JSON with object keys sorted and undefined fields left out, so two equal states print alike. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v
  )
