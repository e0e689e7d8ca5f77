/**
 * What the auto-scavenge tests on a cluster of node processes say to it and read from it: the
 * `/auto-scavenge/*` calls as admin, the status document, a log with work for a scavenger (events,
 * deleted streams, streams capped by `$maxCount`), the `$auto-scavenges` stream as cycles, and each
 * member's last node scavenge.
 */
import { randomUUID } from "node:crypto"
import {
  readEvents,
  sleep,
  stateOf,
  waitUntil,
  type Member,
  type ProcessCluster,
  type ReadEvent
} from "./clusterProcessSupport.js"

const AUTHORIZATION = `Basic ${Buffer.from("admin:changeit").toString("base64")}`
const REQUEST_TIMEOUT_MS = 10_000

export interface Answer {
  readonly status: number
  readonly text: string
}

/** One request to `member` as admin; status 0 when it did not answer. */
export const call = async (
  member: Member,
  method: "GET" | "POST" | "DELETE",
  path: string,
  body?: unknown
): Promise<Answer> => {
  try {
    const response = await fetch(`${member.url}${path}`, {
      method,
      redirect: "manual",
      headers: {
        authorization: AUTHORIZATION,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
    return { status: response.status, text: await response.text() }
  } catch {
    return { status: 0, text: "" }
  }
}

export interface Status {
  readonly state: string
  readonly schedule: string | null
  readonly timeUntilNextCycle: string | null
  readonly cycle: {
    readonly clusterScavengeId: string
    readonly members: ReadonlyArray<{ readonly port: number; readonly done: boolean }>
    readonly designated: { readonly port: number } | null
    readonly nodeScavenge: { readonly scavengeId: string; readonly phase: string | null } | null
  } | null
}

/** `GET /auto-scavenge/status` on `member`, or undefined when it does not answer 200. */
export const statusOf = async (member: Member): Promise<Status | undefined> => {
  const answer = await call(member, "GET", "/auto-scavenge/status")
  return answer.status === 200 ? (JSON.parse(answer.text) as Status) : undefined
}

/** The first status any of `members` answers with (a follower's is the leader's, passed on). */
export const anyStatus = async (members: ReadonlyArray<Member>): Promise<Status | undefined> => {
  for (const member of members) {
    const status = await statusOf(member)
    if (status !== undefined) return status
  }
  return undefined
}

const appendBatch = (leader: Member, stream: string, events: ReadonlyArray<unknown>) =>
  fetch(`${leader.url}/streams/${encodeURIComponent(stream)}`, {
    method: "POST",
    headers: { authorization: AUTHORIZATION, "content-type": "application/vnd.eventstore.events+json" },
    body: JSON.stringify(events),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  }).then(
    async (response) => {
      await response.arrayBuffer()
      return response.status
    },
    () => 0
  )

/** Sends `send` until it answers `expected` (a new cluster's default users appear shortly after its leader). */
const until = async (what: string, expected: number, send: () => Promise<number>) => {
  let last = 0
  for (let attempt = 0; attempt < 100; attempt++) {
    last = await send()
    if (last === expected) return
    await sleep(200)
  }
  throw new Error(`${what}: answered ${last}, not ${expected}`)
}

/**
 * Writes work for a scavenger through the leader: `streams` streams (named after `prefix`) of `perStream`
 * events of about `bodyBytes` each, then deletes every third stream and caps every third (from the second)
 * with `$maxCount: 1`. With small chunks, the log spans many of them.
 */
export const writeScavengeableLog = async (
  leader: Member,
  shape: { readonly prefix: string; readonly streams: number; readonly perStream: number; readonly bodyBytes: number }
) => {
  const padding = "x".repeat(shape.bodyBytes)
  for (let s = 0; s < shape.streams; s++) {
    const stream = `${shape.prefix}-${s}`
    for (let from = 0; from < shape.perStream; from += 50) {
      const batch = Array.from({ length: Math.min(50, shape.perStream - from) }, (_, i) => ({
        eventId: randomUUID(),
        eventType: "worked",
        data: { n: from + i, padding }
      }))
      await until(`an append to ${stream}`, 201, () => appendBatch(leader, stream, batch))
    }
    if (s % 3 === 0)
      await until(`deleting ${stream}`, 204, async () => (await call(leader, "DELETE", `/streams/${stream}`)).status)
    else if (s % 3 === 1)
      await until(`capping ${stream}`, 201, () =>
        appendBatch(leader, `$$${stream}`, [{ eventId: randomUUID(), eventType: "$metadata", data: { $maxCount: 1 } }])
      )
  }
}

/** The member a NodeId of `$auto-scavenges` names (by its HTTP port: every member is on 127.0.0.1). */
export const portOf = (event: ReadEvent): number => (event.data as { nodeId: { port: number } }).nodeId.port

/** `$auto-scavenges` as the node at `member` reads it, or undefined when it does not answer. */
export const autoScavengeEvents = (member: Member) => readEvents(member.url, "$auto-scavenges")

/** The last node scavenge's result on `member` (`GET /admin/scavenge/last`), or undefined without an answer. */
export const lastScavengeResult = async (member: Member): Promise<string | undefined> => {
  const answer = await call(member, "GET", "/admin/scavenge/last")
  if (answer.status !== 200) return undefined
  return (JSON.parse(answer.text) as { scavengeResult?: string }).scavengeResult
}

/** One cycle's events, from its `$cluster-scavenge-started` to its `$cluster-scavenge-completed`. */
export interface Cycle {
  readonly events: ReadonlyArray<ReadEvent>
  /**
   * The members' /info states (in `cluster.members` order) read right after the stream first showed each
   * node's scavenge started, by the node's port: who led when it started.
   */
  readonly statesAtStart: ReadonlyMap<number, ReadonlyArray<string | undefined>>
  /** The public states `/auto-scavenge/status` went through while the cycle was watched (repeats folded). */
  readonly statusStates: ReadonlyArray<string>
}

/** Which cycle: the `n`th of the stream (from 0), or the one with this cluster scavenge id. */
export type WhichCycle = number | string

/** The events of a cycle of `$auto-scavenges`, as far as they go. */
export const cycleEvents = (events: ReadonlyArray<ReadEvent>, which: WhichCycle): ReadonlyArray<ReadEvent> => {
  const starts = events.flatMap((event, i) => (event.eventType === "$cluster-scavenge-started" ? [i] : []))
  const start =
    typeof which === "number"
      ? starts[which]
      : starts.find((i) => (events[i]!.data as { clusterScavengeId: string }).clusterScavengeId === which)
  if (start === undefined) return []
  const from = events.slice(start)
  const end = from.findIndex((event) => event.eventType === "$cluster-scavenge-completed")
  return end < 0 ? from : from.slice(0, end + 1)
}

/**
 * Watches a cycle until it completes: `$auto-scavenges` from any member that answers, each member's /info
 * state whenever a node's scavenge is first seen started, and the status states.
 */
export const watchCycle = async (cluster: ProcessCluster, which: WhichCycle, ms: number): Promise<Cycle> => {
  const statesAtStart = new Map<number, ReadonlyArray<string | undefined>>()
  const statusStates: Array<string> = []
  let events: ReadonlyArray<ReadEvent> = []
  const done = () => events.at(-1)?.eventType === "$cluster-scavenge-completed"
  await waitUntil(
    cluster,
    () => `cycle ${which} completing (seen so far: ${events.map((e) => e.eventType).join(", ")})`,
    ms,
    async () => {
      const status = await anyStatus(cluster.members)
      if (status !== undefined && statusStates.at(-1) !== status.state) statusStates.push(status.state)
      for (const member of cluster.members) {
        const read = await autoScavengeEvents(member)
        if (read === undefined) continue
        events = cycleEvents(read, which)
        break
      }
      for (const event of events) {
        if (event.eventType !== "$node-scavenge-started" || statesAtStart.has(portOf(event))) continue
        statesAtStart.set(portOf(event), await Promise.all(cluster.members.map(stateOf)))
      }
      return done() ? true : undefined
    }
  )
  return { events, statesAtStart, statusStates }
}

/** The ports of the nodes whose scavenge completed in `events`, in order, with each result. */
export const completions = (events: ReadonlyArray<ReadEvent>) =>
  events
    .filter((event) => event.eventType === "$node-scavenge-completed")
    .map((event) => ({ port: portOf(event), result: (event.data as { result: string }).result }))

/**
 * Which node each node-level event is about breaks none of the cycle's links: every node scavenge started is
 * on the node last designated, and every completion is of the node scavenge last started. The offending
 * events, empty when none.
 */
export const unlinkedNodeEvents = (events: ReadonlyArray<ReadEvent>): ReadonlyArray<string> => {
  let designated: number | undefined
  let started: number | undefined
  const wrong: Array<string> = []
  for (const event of events) {
    if (event.eventType === "$node-designated") designated = portOf(event)
    else if (event.eventType === "$node-scavenge-started") {
      if (portOf(event) !== designated) wrong.push(`${event.eventNumber} ${event.eventType} ${portOf(event)}`)
      started = portOf(event)
    } else if (event.eventType === "$node-scavenge-completed" && portOf(event) !== started)
      wrong.push(`${event.eventNumber} ${event.eventType} ${portOf(event)}`)
  }
  return wrong
}

/** About 3 MB for `writeScavengeableLog`: some 24 chunks of 128 KiB, a node scavenge of a few seconds. */
export const Work = { streams: 30, perStream: 200, bodyBytes: 400 } as const

/**
 * Who led when `member`'s scavenge of `cycle` was first seen started: `member`'s own /info state then, and how
 * many of `members` said they led. A leader that resigned before its own scavenge shows another state, and one
 * leader.
 */
export const rolesWhenStarted = (cycle: Cycle, member: Member, members: ReadonlyArray<Member>) => {
  const states = cycle.statesAtStart.get(member.httpPort) ?? []
  return { own: states[members.indexOf(member)], leaders: states.filter((state) => state === "leader").length }
}

/**
 * The members' options for these tests: gossip (the driver's clock) every half second, and small chunks
 * (so a little data makes many chunks and a node scavenge that lasts a while), which need a smaller
 * largest event.
 */
export const AutoScavengeClusterArgs: ReadonlyArray<string> = [
  ["--gossip-interval-ms", "500"],
  ["--chunk-size", "131072"],
  ["--max-append-event-size", "32768"]
].flat()

const EARLY_PHASES = new Set([null, "Beginning", "Accumulating", "Calculating", "ExecutingChunks"])

/** The ids of the cycles `$auto-scavenges` holds now (as `member` reads it). */
export const cycleIds = async (member: Member): Promise<ReadonlySet<string>> =>
  new Set(
    ((await autoScavengeEvents(member)) ?? [])
      .filter((event) => event.eventType === "$cluster-scavenge-started")
      .map((event) => (event.data as { clusterScavengeId: string }).clusterScavengeId)
  )

/**
 * Waits until a cycle in progress (not one of `earlier`) is at its first node scavenge, started and in its
 * early phases (so it still has a while to run, and the cycle cannot complete before the next request).
 */
export const waitForFirstNodeScavenge = (
  cluster: ProcessCluster,
  ms: number,
  earlier: ReadonlySet<string> = new Set()
) =>
  waitUntil(cluster, "a cycle in progress at its first node scavenge", ms, async () => {
    const status = await anyStatus(cluster.members)
    const cycle = status?.cycle
    if (status?.state !== "InProgress" || cycle === null || cycle === undefined) return undefined
    const early = cycle.nodeScavenge !== null && EARLY_PHASES.has(cycle.nodeScavenge.phase)
    return early &&
      cycle.members.every((m) => !m.done) &&
      cycle.designated !== null &&
      !earlier.has(cycle.clusterScavengeId)
      ? { clusterScavengeId: cycle.clusterScavengeId, designated: cycle.designated.port }
      : undefined
  })
