/**
 * The node processes of `npm run bench:cluster`: three cluster members on this machine (each its own `node
 * dist/main.mjs`, HTTP and internal ports picked free, data under the run's directory, seeded with the other
 * two, the secret in its environment as `npm run cluster` gives it), and what the benchmark asks of them over
 * HTTP: a member's state (`/info`), its own positions (its record in `/gossip`), and the leader.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { freePort, startVellum, type VellumNode } from "./httpProcesses.js"

export const HOST = "127.0.0.1"
export const CLUSTER_SIZE = 3
/** A cheap hash keeps the first start quick; per request, authentication is a cache lookup either way. */
export const PASSWORD_HASH_COST = 10

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface MemberSpec {
  readonly name: string
  readonly httpPort: number
  readonly internalPort: number
  readonly db: string
}

/** A member of the benchmark's cluster: where it is, and its process while it runs. */
export interface Member extends MemberSpec {
  readonly origin: string
  process: VellumNode | undefined
}

export interface BenchCluster {
  readonly members: ReadonlyArray<Member>
  readonly secret: string
}

/** Three members with free ports, their databases under `dataDir`; nothing started yet. */
export const planCluster = async (dataDir: string): Promise<BenchCluster> => {
  const members: Array<Member> = []
  for (let n = 1; n <= CLUSTER_SIZE; n++) {
    const httpPort = await freePort()
    const internalPort = await freePort()
    members.push({
      name: `node${n}`,
      httpPort,
      internalPort,
      db: path.join(dataDir, `node${n}`),
      origin: `http://${HOST}:${httpPort}`,
      process: undefined
    })
  }
  return { members, secret: crypto.randomBytes(24).toString("base64url") }
}

/** The command line of a member: the cluster's options with the default timings, as `npm run cluster` has it. */
export const memberArgs = (member: MemberSpec, all: ReadonlyArray<MemberSpec>): Array<string> => [
  "--db",
  member.db,
  "--password-hash-cost",
  String(PASSWORD_HASH_COST),
  "--cluster-size",
  String(CLUSTER_SIZE),
  "--node-ip",
  HOST,
  "--replication-ip",
  HOST,
  "--replication-port",
  String(member.internalPort),
  "--gossip-seed",
  all
    .filter((other) => other.name !== member.name)
    .map((other) => `${HOST}:${other.internalPort}`)
    .join(",")
]

/** Starts one member (its database as it is on disk) and waits until it is live. */
export const startMember = async (cluster: BenchCluster, member: Member): Promise<void> => {
  member.process = await startVellum(member.httpPort, memberArgs(member, cluster.members), {
    VELLUM_CLUSTER_SECRET: cluster.secret
  })
}

/** Starts every member that is not running, all at once. */
export const startAll = (cluster: BenchCluster) =>
  Promise.all(cluster.members.filter((m) => m.process === undefined).map((m) => startMember(cluster, m)))

/** SIGKILLs a member and waits until its process is gone. */
export const killMember = async (member: Member) => {
  const running = member.process
  member.process = undefined
  await running?.kill()
}

/** Stops a member with POST /admin/shutdown; true when it stopped by itself (or was not running). */
export const stopMember = async (member: Member, authorization: string): Promise<boolean> => {
  const running = member.process
  member.process = undefined
  return running === undefined ? true : await running.shutdown(authorization)
}

/** Stops every running member, all at once; true when all stopped by themselves. */
export const stopAll = async (cluster: BenchCluster, authorization: string): Promise<boolean> =>
  (await Promise.all(cluster.members.map((m) => stopMember(m, authorization)))).every((ok) => ok)

/** Removes a stopped member's database: it comes back as a new, empty node. */
export const wipeMember = (member: Member) => {
  if (member.process !== undefined) throw new Error(`${member.name} is running: stop it before wiping its data`)
  fs.rmSync(member.db, { recursive: true, force: true })
}

const getJson = async (url: string, authorization: string | undefined, timeoutMs: number): Promise<unknown> => {
  try {
    const response = await fetch(url, {
      headers: authorization === undefined ? {} : { authorization, accept: "application/json" },
      signal: AbortSignal.timeout(timeoutMs)
    })
    return response.ok ? await response.json() : undefined
  } catch {
    return undefined
  }
}

/** The state `/info` gives (`leader`, `follower`, …), or undefined when the member does not answer. */
export const stateOf = async (member: Member): Promise<string | undefined> => {
  if (member.process === undefined) return undefined
  const info = await getJson(`${member.origin}/info`, undefined, 1_000)
  const state = (info as { state?: unknown } | undefined)?.state
  return typeof state === "string" ? state : undefined
}

/** A member's positions as it reports them itself. */
export interface Positions {
  readonly state: string
  readonly writerCheckpoint: number
  readonly chaserCheckpoint: number
}

/** The record a `/gossip` answer holds for the member listening on `internalPort`, if any. */
export const ownRecord = (gossip: unknown, internalPort: number): Positions | undefined => {
  const members = (gossip as { members?: unknown } | undefined)?.members
  if (!Array.isArray(members)) return undefined
  const record = members.find(
    (m): m is Record<string, unknown> =>
      typeof m === "object" && m !== null && (m as Record<string, unknown>)["internalTcpPort"] === internalPort
  )
  if (record === undefined) return undefined
  const { state, writerCheckpoint, chaserCheckpoint } = record
  return typeof state === "string" && typeof writerCheckpoint === "number" && typeof chaserCheckpoint === "number"
    ? { state, writerCheckpoint, chaserCheckpoint }
    : undefined
}

/** A member's own positions (its record in its own `/gossip`, read from its store), or undefined. */
export const positionsOf = async (member: Member, authorization: string): Promise<Positions | undefined> => {
  if (member.process === undefined) return undefined
  return ownRecord(await getJson(`${member.origin}/gossip`, authorization, 1_000), member.internalPort)
}

/**
 * Waits until the running members agree: one says `leader`, every other running one `follower`, and all
 * hold the same writer checkpoint (nothing left to replicate). Returns the leader.
 */
export const settledLeader = async (
  cluster: BenchCluster,
  authorization: string,
  timeoutMs = 120_000
): Promise<Member> => {
  const deadline = Date.now() + timeoutMs
  let last = ""
  while (Date.now() < deadline) {
    const running = cluster.members.filter((m) => m.process !== undefined)
    const seen = await Promise.all(running.map((m) => positionsOf(m, authorization)))
    last = seen.map((p, i) => `${running[i]!.name} ${p?.state ?? "?"} ${p?.writerCheckpoint ?? "?"}`).join(", ")
    const leaders = running.filter((_, i) => seen[i]?.state === "Leader")
    const followers = seen.filter((p) => p?.state === "Follower").length
    const writers = new Set(seen.map((p) => p?.writerCheckpoint))
    // /info as well: it is what clients see, and it must agree with the gossip record.
    if (leaders.length === 1 && followers === running.length - 1 && writers.size === 1) {
      if ((await stateOf(leaders[0]!)) === "leader") return leaders[0]!
    }
    await sleep(100)
  }
  throw new Error(`the cluster did not settle within ${timeoutMs / 1000} s: ${last}`)
}
