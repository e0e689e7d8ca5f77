/**
 * The fault driver of a multi-node seed, on its own Prng fork: between two slices of the world it crashes
 * and restarts members (their disks lose unsynced bytes and tear writes), kills the leader, makes the leader
 * resign (`POST /admin/node/resign` as the admin), partitions links one way or both, isolates a member,
 * heals the network, and pauses members and resumes them. Every fault it starts it also ends, on a timer
 * of its own: a crashed member restarts and a paused one resumes after a while, partitions heal.
 * `healAll` ends every fault at once, for the liveness phase.
 *
 * In auto-scavenge seeds that replace nodes it also, on a Prng fork of its own (the other faults draw as
 * before), replaces a member as an operator replaces a dead machine: the member goes down, and a while
 * later a new node with an empty disk takes its internal address at another HTTP endpoint. It does so only
 * while every other voter is open and holds everything any member has committed — an operator replaces one
 * machine of a healthy cluster; losing a machine's disk while others lag could lose committed writes, which
 * no replication scheme prevents.
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import type { Coverage } from "../coverage.js"
import type { ClusterWorld } from "./clusterWorld.js"
import { ClientsNode } from "./clusterWorld.js"

const AdminAuthorization = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

type Scheduled = { readonly at: number; readonly node: string; readonly action: "restart" | "resume" | "replace" }

/** At most this many replacements per seed. */
const MaxReplacements = 2

export class FaultDriver {
  private scheduled: Array<Scheduled> = []
  private healAt: number | undefined
  private readonly replacePrng: Prng
  private replacements = 0

  constructor(
    private readonly prng: Prng,
    private readonly cluster: ClusterWorld,
    private readonly coverage: Coverage
  ) {
    this.replacePrng = prng.fork("replacements")
  }

  /** When the driver wants to act next, from `now`. */
  nextGap(): number {
    const [min, max] = this.cluster.options.faultGapMs
    return this.prng.int(min, max)
  }

  /** Ends the faults whose time has come, then maybe starts a new one. */
  act(now: number): void {
    const due = this.scheduled.filter((s) => s.at <= now)
    this.scheduled = this.scheduled.filter((s) => s.at > now)
    for (const s of due) this.end(s)
    if (this.healAt !== undefined && this.healAt <= now) {
      this.cluster.network.heal()
      this.healAt = undefined
    }
    if (this.autoScavengeFault(now)) return
    this.start(now)
  }

  /**
   * Auto-scavenge seeds' own faults, on their own Prng fork: a member whose node scavenge runs crashes (the
   * restart path) or is replaced (the cancel path), the leader crashes while a cycle is under way (the new
   * leader loads the state and goes on), or any member is replaced. True when one was started.
   */
  private autoScavengeFault(now: number): boolean {
    const auto = this.cluster.options.autoScavenge
    if (auto === undefined) return false
    const p = this.replacePrng
    const cluster = this.cluster
    const running = cluster.members.map((m) => m.name).filter((n) => cluster.running(n))
    const mayDisable = running.length > 1
    if (auto.targetedFaults && mayDisable) {
      const scavenging = cluster.scavenges
        .running()
        .map((run) => cluster.members.find((m) => cluster.label(m.name) === run.node)?.name)
        .find((name) => name !== undefined && cluster.running(name))
      if (scavenging !== undefined && p.chance(0.3)) {
        if (auto.replaceNodes && p.chance(0.3) && this.replaceOne(now, scavenging)) {
          this.coverage.hit("autoScavenge.designatedReplaced")
          return true
        }
        this.crash(scavenging, now, cluster.leaders().includes(scavenging))
        this.coverage.hit("autoScavenge.followerCrashedMidScavenge")
        return true
      }
      const leader = cluster.leaders().find((l) => cluster.running(l))
      const cycleUnderWay = cluster.scavenges.runs.some((r) => (r.endedAt ?? now) > now - 20_000)
      if (leader !== undefined && cycleUnderWay && p.chance(0.1)) {
        this.crash(leader, now, true)
        this.coverage.hit("autoScavenge.leaderCrashedMidCycle")
        return true
      }
    }
    return auto.replaceNodes && p.chance(0.05) && this.replaceOne(now)
  }

  private end(s: Scheduled): void {
    if (s.action === "restart" && this.cluster.crashed.has(s.node)) this.cluster.restart(s.node)
    if (s.action === "resume" && this.cluster.paused.has(s.node)) this.cluster.resume(s.node)
    if (s.action === "replace" && this.cluster.crashed.has(s.node)) {
      this.cluster.replace(s.node)
      this.coverage.hit("autoScavenge.replaced")
    }
  }

  /** Takes a member's machine down for good, to be replaced later; false when no member may go now. */
  private replaceOne(now: number, target?: string): boolean {
    const cluster = this.cluster
    if (this.replacements >= MaxReplacements || cluster.members.length < 2) return false
    const committed = Math.max(
      ...cluster.members.map((m) => cluster.open(m.name)?.committed() ?? 0),
      ...cluster.members.map((m) => cluster.highestCommitted(m.name))
    )
    const holdsAll = (name: string) => {
      const open = cluster.open(name)
      return open !== undefined && !cluster.paused.has(name) && (open.replica?.writerCheckpoint() ?? 0) >= committed
    }
    const candidates = cluster.members.filter(
      (m) =>
        (target === undefined || m.name === target) &&
        cluster.running(m.name) &&
        cluster.voters.every((v) => v.name === m.name || holdsAll(v.name))
    )
    if (candidates.length === 0) return false
    const node = this.replacePrng.pick(candidates).name
    this.replacements++
    cluster.crash(node, this.replacePrng, "strict")
    this.scheduled.push({ at: now + this.replacePrng.int(200, 3_000), node, action: "replace" })
    return true
  }

  private start(now: number): void {
    const cluster = this.cluster
    const p = this.prng
    const names = cluster.members.map((m) => m.name)
    const running = names.filter((n) => cluster.running(n))
    // At least one member keeps running (a cluster of one may lose its only member for a while).
    const mayDisable = running.length > 1 || cluster.members.length === 1
    const leader = cluster.leaders().find((l) => cluster.running(l))
    const r = p.next()
    if (r < 0.14 && mayDisable && running.length > 0) return this.crash(p.pick(running), now, false)
    if (r < 0.24 && mayDisable && leader !== undefined) return this.crash(leader, now, true)
    if (r < 0.34 && leader !== undefined && cluster.voters.length > 1) return this.resign(leader)
    if (r < 0.44 && mayDisable && running.length > 0) {
      const node = p.pick(running)
      cluster.pause(node)
      this.coverage.hit("cluster.paused")
      this.scheduled.push({ at: now + p.int(100, 3_000), node, action: "resume" })
      return
    }
    if (names.length < 2) return
    const internal = (n: string) => cluster.member(n).internal
    if (r < 0.58) {
      const a = p.pick(names)
      const b = p.pick(names.filter((n) => n !== a))
      const oneWay = p.chance(0.4)
      cluster.network.partition(internal(a), internal(b), oneWay)
      this.coverage.hit(oneWay ? "cluster.partition.oneWay" : "cluster.partition.twoWay")
      this.healAt ??= now + p.int(300, 6_000)
      return
    }
    if (r < 0.66) {
      // Half the time the leader, for long: it may take writes it cannot commit (which the new leader's
      // followers cut), and it must step down.
      const isLeader = leader !== undefined && p.chance(0.5)
      cluster.network.isolate(internal(isLeader ? leader : p.pick(names)))
      this.coverage.hit("cluster.isolated")
      this.healAt = Math.max(this.healAt ?? 0, now + (isLeader ? p.int(2_000, 8_000) : p.int(300, 6_000)))
      return
    }
    if (r < 0.69) {
      cluster.network.heal()
      this.healAt = undefined
    }
  }

  private crash(node: string, now: number, isLeader: boolean): void {
    const p = this.prng
    const mode = p.chance(0.3) ? "strict" : "random"
    const { tornWrites } = this.cluster.crash(node, p, mode)
    this.coverage.hit(mode === "strict" ? "crash.strict" : "crash.random")
    if (tornWrites > 0) this.coverage.hit("crash.tornWrite")
    if (isLeader) this.coverage.hit("cluster.leaderCrashed")
    this.scheduled.push({ at: now + p.int(200, 5_000), node, action: "restart" })
  }

  /** Asks the leader to resign over HTTP, as the admin; the answer is awaited on the clients' node. */
  private resign(leader: string): void {
    const member = this.cluster.member(leader)
    const inFlight = this.cluster.access.start(leader, {
      method: "POST",
      url: "/admin/node/resign",
      headers: { host: member.http, authorization: AdminAuthorization },
      body: undefined
    })
    if (inFlight === undefined) return
    this.cluster.world.trace(`resign ${leader}`)
    const coverage = this.coverage
    this.cluster.world.fork(
      ClientsNode,
      Effect.map(inFlight.fiber.await, (exit) => {
        if (exit._tag === "Success" && exit.value.reply.status < 300) coverage.hit("cluster.resigned")
      })
    )
  }

  /** The liveness phase: every fault ends now. */
  healAll(): void {
    const cluster = this.cluster
    cluster.network.heal()
    cluster.network.faults = { lossChance: 0, duplicateChance: 0, breakChance: 0 }
    this.healAt = undefined
    for (const s of this.scheduled) if (s.action === "replace") this.end(s)
    this.scheduled = []
    for (const m of cluster.members) {
      if (cluster.paused.has(m.name)) cluster.resume(m.name)
      if (cluster.crashed.has(m.name)) cluster.restart(m.name)
    }
  }
}
