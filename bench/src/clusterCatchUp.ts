/**
 * Catch-up for `npm run bench:cluster`: a follower is stopped and its data removed, the two others (a quorum)
 * take appends until the leader's log holds `logBytes`, then the wiped follower starts again, empty — a new
 * node joining — and replicates the whole log from the leader. Its own `/gossip` record gives its writer
 * checkpoint (what it has written and flushed) and its chaser checkpoint (what it has indexed), polled until
 * both reach the leader's. Nothing is appended during the catch-up.
 */
import * as crypto from "node:crypto"
import { EVENTS_CONTENT_TYPE, eventId } from "./httpPlan.js"
import { positionsOf, startMember, stopMember, wipeMember, type BenchCluster, type Member } from "./clusterProcesses.js"

const nowMs = () => performance.now()
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const MiB = 1024 * 1024
const FILL_CONNECTIONS = 8
const POLL_MS = 100

export interface FillShape {
  /** The size of each event's data (a JSON string of that many characters, plus its quotes and key). */
  readonly eventBytes: number
  readonly eventsPerAppend: number
}

export interface Fill {
  readonly logBytes: number
  readonly events: number
  readonly secs: number
}

/** The body of one append of `count` events of about `dataBytes` each. */
export const paddedAppendBody = (salt: string, firstN: number, count: number, dataBytes: number): string => {
  const data = `{"pad":"${"x".repeat(Math.max(0, dataBytes - 10))}"}`
  const events = new Array<string>(count)
  for (let i = 0; i < count; i++) {
    events[i] = `{"eventId":"${eventId(salt, firstN + i)}","eventType":"BenchFill","data":${data}}`
  }
  return `[${events.join(",")}]`
}

/** Appends to `leader` until its writer checkpoint reaches `logBytes`. */
export const fillLog = async (
  leader: Member,
  authorization: string,
  logBytes: number,
  shape: FillShape
): Promise<Fill> => {
  const salt = crypto.randomBytes(4).toString("hex")
  const started = nowMs()
  let appends = 0
  let full = false
  const appender = async () => {
    while (!full) {
      const k = appends++
      const response = await fetch(`${leader.origin}/streams/bench-fill-${k % 1000}`, {
        method: "POST",
        headers: { authorization, "content-type": EVENTS_CONTENT_TYPE, "kurrent-expectedversion": "-2" },
        body: paddedAppendBody(salt, k * shape.eventsPerAppend, shape.eventsPerAppend, shape.eventBytes)
      })
      const text = await response.text()
      if (response.status !== 201) throw new Error(`fill append: ${response.status} ${text}`)
    }
  }
  const watch = async () => {
    while (!full) {
      const positions = await positionsOf(leader, authorization)
      if (positions !== undefined && positions.writerCheckpoint >= logBytes) full = true
      else await sleep(200)
    }
  }
  await Promise.all([watch(), ...Array.from({ length: FILL_CONNECTIONS }, appender)])
  const positions = await positionsOf(leader, authorization)
  return {
    logBytes: positions?.writerCheckpoint ?? logBytes,
    events: appends * shape.eventsPerAppend,
    secs: (nowMs() - started) / 1000
  }
}

export interface CatchUp {
  readonly logBytes: number
  /** From spawning the empty node to its `/health/live` answering. */
  readonly startSecs: number
  /** From live to its writer checkpoint reaching the leader's (written and flushed). */
  readonly writtenSecs: number
  /** From live to its chaser checkpoint reaching the leader's (indexed). */
  readonly indexedSecs: number
  /** Log bytes per second, live to written. */
  readonly writtenMiBPerSec: number
  readonly indexedMiBPerSec: number
  /** From live to the first poll that saw its writer checkpoint move (finding the leader, subscribing). */
  readonly firstBytesSecs: number | undefined
  /** Log bytes per second from that poll to written: the streaming alone. */
  readonly streamingMiBPerSec: number | undefined
}

/** Waits until `member`'s own writer and chaser checkpoints reach `target`; the times they did, from now. */
const followUntil = async (member: Member, authorization: string, target: number, timeoutMs: number) => {
  const start = nowMs()
  let written: number | undefined
  let indexed: number | undefined
  let initial: number | undefined
  let moved: { readonly at: number; readonly from: number } | undefined
  let last = "no answer"
  while (indexed === undefined || written === undefined) {
    const positions = await positionsOf(member, authorization)
    const at = nowMs()
    if (positions !== undefined) {
      last = `${positions.state}, writer ${positions.writerCheckpoint}, chaser ${positions.chaserCheckpoint}`
      initial ??= positions.writerCheckpoint
      if (moved === undefined && positions.writerCheckpoint > initial)
        moved = { at: at - start, from: positions.writerCheckpoint }
      if (written === undefined && positions.writerCheckpoint >= target) written = at - start
      if (indexed === undefined && positions.chaserCheckpoint >= target) indexed = at - start
    }
    if (at - start > timeoutMs)
      throw new Error(`catch-up: ${member.name} did not reach ${target} in ${timeoutMs / 1000} s (${last})`)
    if (indexed === undefined || written === undefined) await sleep(POLL_MS)
  }
  return { writtenMs: written, indexedMs: indexed, moved }
}

/**
 * Stops `follower`, wipes it, fills the log through `leader` to `logBytes`, restarts the follower empty and
 * times its catch-up.
 */
export const catchUpTrial = async (
  cluster: BenchCluster,
  leader: Member,
  follower: Member,
  authorization: string,
  logBytes: number,
  shape: FillShape,
  onFilled: (fill: Fill) => void
): Promise<CatchUp> => {
  if (!(await stopMember(follower, authorization))) throw new Error(`catch-up: ${follower.name} did not stop cleanly`)
  wipeMember(follower)
  const fill = await fillLog(leader, authorization, logBytes, shape)
  onFilled(fill)
  const target = fill.logBytes
  const spawned = nowMs()
  await startMember(cluster, follower)
  const startSecs = (nowMs() - spawned) / 1000
  // A generous bound: a catch-up slower than 1 MiB/s is a failure, not a figure.
  const { writtenMs, indexedMs, moved } = await followUntil(
    follower,
    authorization,
    target,
    60_000 + (target / MiB) * 1_000
  )
  return {
    logBytes: target,
    startSecs,
    writtenSecs: writtenMs / 1000,
    indexedSecs: indexedMs / 1000,
    writtenMiBPerSec: target / MiB / (writtenMs / 1000),
    indexedMiBPerSec: target / MiB / (indexedMs / 1000),
    firstBytesSecs: moved === undefined ? undefined : moved.at / 1000,
    streamingMiBPerSec:
      moved === undefined || writtenMs <= moved.at
        ? undefined
        : (target - moved.from) / MiB / ((writtenMs - moved.at) / 1000)
  }
}
