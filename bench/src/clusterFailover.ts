/**
 * Failover for `npm run bench:cluster`: SIGKILL the leader of a settled cluster while one client appends to
 * it, then time the first append a survivor accepts (201) — the new leader taking writes. Its peer: the
 * same with the leader resigning instead of dying, which leaves out the time to notice the leader is gone. Both survivors are
 * probed at once, one append in flight each, straight at each node (a follower answers 307, and its Location
 * still names the dead leader until it hears of the new one). Alongside, `/info` of both survivors is polled
 * for the moment one says `leader`, which splits the time into the election and what follows it (the new
 * leader's epoch reaching a quorum before it takes writes). The killed node is then restarted on its own
 * data, and the trial ends when it has rejoined as a follower and caught up.
 */
import * as crypto from "node:crypto"
import { EVENTS_CONTENT_TYPE, appendBody } from "./httpPlan.js"
import { killMember, settledLeader, startMember, stateOf, type BenchCluster, type Member } from "./clusterProcesses.js"

const nowMs = () => performance.now()
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
/** Between a survivor's refusals: the probes must not take the CPU the election needs. */
const RETRY_MS = 10
/** An append left unanswered this long is abandoned (a node that lost its leader must answer, not hang). */
const APPEND_TIMEOUT_MS = 10_000
/** Appends to the leader before it is killed, so the kill lands under a (light) load. */
const LOAD_BEFORE_KILL_MS = 300

/**
 * How the leader goes: SIGKILL (the others must notice it is gone), or `POST /admin/node/resign` (it hands
 * over at once: the election and the new epoch without the detection, the peer of a kill).
 */
export type LeaderLoss = "kill" | "resign"

export interface FailoverTrial {
  readonly loss: LeaderLoss
  readonly lost: string
  readonly newLeader: string
  /** SIGKILL (or the resign request) to the first 201 from another node. */
  readonly failoverMs: number
  /** SIGKILL (or the resign request) to the first `/info` of another node saying `leader`. */
  readonly electedMs: number | undefined
  /** Appends the survivors refused or left unanswered meanwhile, by status (0: no answer). */
  readonly refusals: Readonly<Record<string, number>>
  /** From restarting the killed node (or the resign) to the cluster settled again with it as a follower. */
  readonly rejoinMs: number
}

/** One append of one event to `origin`, redirects not followed: the status, or 0 for no answer. */
const appendOnce = async (origin: string, authorization: string, body: string, stop: AbortSignal) => {
  try {
    const response = await fetch(`${origin}/streams/bench-failover`, {
      method: "POST",
      redirect: "manual",
      headers: { authorization, "content-type": EVENTS_CONTENT_TYPE, "kurrent-expectedversion": "-2" },
      body,
      signal: AbortSignal.any([stop, AbortSignal.timeout(APPEND_TIMEOUT_MS)])
    })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 0
  }
}

/** Asks `member` to resign its leadership; resolves when it has answered (or could not be reached). */
const resign = async (member: Member, authorization: string) => {
  try {
    const response = await fetch(`${member.origin}/admin/node/resign`, { method: "POST", headers: { authorization } })
    await response.arrayBuffer()
  } catch {
    // Judged by what the others do next.
  }
}

export const failoverTrial = async (
  cluster: BenchCluster,
  authorization: string,
  loss: LeaderLoss
): Promise<FailoverTrial> => {
  const leader = await settledLeader(cluster, authorization)
  const salt = crypto.randomBytes(4).toString("hex")
  let n = 0
  const nextBody = () => appendBody(salt, n++, 1)

  const beforeKill = new AbortController()
  const load = (async () => {
    while (!beforeKill.signal.aborted) await appendOnce(leader.origin, authorization, nextBody(), beforeKill.signal)
  })()
  await sleep(LOAD_BEFORE_KILL_MS)

  const lostAt = nowMs()
  const losing = loss === "kill" ? killMember(leader) : resign(leader, authorization)
  beforeKill.abort()
  const survivors = cluster.members.filter((m) => m !== leader)
  const done = new AbortController()
  const refusals: Record<string, number> = {}
  let first: { readonly at: number; readonly member: Member } | undefined
  let electedAt: number | undefined

  const probe = async (member: Member) => {
    while (!done.signal.aborted) {
      const status = await appendOnce(member.origin, authorization, nextBody(), done.signal)
      if (status === 201) {
        first ??= { at: nowMs(), member }
        done.abort()
      } else if (!done.signal.aborted) {
        refusals[status] = (refusals[status] ?? 0) + 1
        await sleep(RETRY_MS)
      }
    }
  }
  const watchElection = async () => {
    while (!done.signal.aborted && electedAt === undefined) {
      const states = await Promise.all(survivors.map(stateOf))
      if (states.includes("leader")) electedAt = nowMs()
      else await sleep(RETRY_MS)
    }
  }
  await Promise.all([...survivors.map(probe), watchElection(), load, losing])
  if (first === undefined) throw new Error(`failover (${loss}): no other node accepted an append`)

  const restartedAt = nowMs()
  if (loss === "kill") await startMember(cluster, leader)
  await settledLeader(cluster, authorization)
  return {
    loss,
    lost: leader.name,
    newLeader: first.member.name,
    failoverMs: first.at - lostAt,
    electedMs: electedAt === undefined ? undefined : electedAt - lostAt,
    refusals,
    rejoinMs: nowMs() - restartedAt
  }
}
