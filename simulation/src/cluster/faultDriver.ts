/**
 * The fault driver of a multi-node seed, on its own Prng fork: between two slices of the world it crashes
 * and restarts members (their disks lose unsynced bytes and tear writes), kills the leader, makes the leader
 * resign (`POST /admin/node/resign` as the admin), partitions links one way or both, isolates a member,
 * heals the network, and pauses members and resumes them. Every fault it starts it also ends, on a timer
 * of its own: a crashed member restarts and a paused one resumes after a while, partitions heal.
 * `healAll` ends every fault at once, for the liveness phase.
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import type { Coverage } from "../coverage.js"
import type { ClusterWorld } from "./clusterWorld.js"
import { ClientsNode } from "./clusterWorld.js"

const AdminAuthorization = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

type Scheduled = { readonly at: number; readonly node: string; readonly action: "restart" | "resume" }

export class FaultDriver {
  private scheduled: Array<Scheduled> = []
  private healAt: number | undefined

  constructor(
    private readonly prng: Prng,
    private readonly cluster: ClusterWorld,
    private readonly coverage: Coverage
  ) {}

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
    this.start(now)
  }

  private end(s: Scheduled): void {
    if (s.action === "restart" && this.cluster.crashed.has(s.node)) this.cluster.restart(s.node)
    if (s.action === "resume" && this.cluster.paused.has(s.node)) this.cluster.resume(s.node)
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
    this.scheduled = []
    for (const m of cluster.members) {
      if (cluster.paused.has(m.name)) cluster.resume(m.name)
      if (cluster.crashed.has(m.name)) cluster.restart(m.name)
    }
  }
}
