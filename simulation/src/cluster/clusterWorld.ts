/**
 * The simulated cluster: every member the unmodified NodeApp on its own MemoryDisk and its own SimNode
 * (scheduler, clock with a bounded skew, Random), all joined by one SimNetwork; two more SimNodes run the
 * clients and the checkers (never crashed, no skew). It opens, crashes, restarts, pauses and resumes members
 * and gives the clients their way in (`access`: a request runs on the member's own scheduler).
 *
 * A crash is a power cut: the member's scheduler stops between two steps, no finalizer runs, and its disk
 * keeps only what its durability model allows (unsynced bytes lost, a write torn at a random byte). The
 * next lifetime opens on what survived, with a new instance id, as a restarted process would.
 */
import { Effect, LogLevel, Logger, Scope } from "effect"
import {
  MemoryDisk,
  Prng,
  SimNetwork,
  SimWorld,
  type CrashMode,
  type SimRunOptions,
  type SimRunResult
} from "@vellum/platform"
import type { HttpRequest } from "@vellum/http"
import { defaultStorageConfig, type StorageConfig } from "@vellum/storage"
import type { LoadedConfig } from "@vellum/node/config"
import { AssertionWatch, assertionFailure } from "../assertionWatch.js"
import type { ClusterAccess, Handled, InFlight } from "./router.js"
import { instanceIdOf, memberConfig, membersOf, openMember, type Member, type OpenMember } from "./clusterNodes.js"
import { autoScavengeEpochMs, type ClusterSimOptions } from "./clusterOptions.js"
import { NodeScavengeLog, type NodeScavenge } from "./nodeScavenges.js"
import { latestScavengePoint } from "@vellum/scavenge"

export const ClientsNode = "clients"
export const ObserverNode = "observer"
/** Where a request to a replaced member's old HTTP endpoint goes: no node, so it is answered as down. */
const RetiredNode = "retired"

export class ClusterWorld {
  readonly world: SimWorld
  readonly network: SimNetwork
  private current: Array<Member>
  /** HTTP endpoints of replaced members' old machines: nothing answers there any more. */
  private readonly retired = new Set<string>()
  private readonly replaced = new Set<string>()
  private readonly endpointLabels = new Map<string, string>()
  /** Every lifetime's instance id, with the member as the checkers named it then. */
  private readonly byInstance = new Map<string, string>()
  private readonly committedAtCrash = new Map<string, number>()
  private readonly disks = new Map<string, MemoryDisk>()
  private readonly configs = new Map<string, LoadedConfig>()
  private readonly opened = new Map<string, OpenMember>()
  private readonly storage: StorageConfig
  private readonly disksPrng: Prng
  private readonly watch: AssertionWatch
  /** Every node scavenge seen, watched after every slice in auto-scavenge seeds (`run`). */
  readonly scavenges = new NodeScavengeLog()
  readonly crashed = new Set<string>()
  readonly paused = new Set<string>()
  /** Why the cluster cannot run (a configuration that did not load, a node that did not open, an assertion). */
  failure: string | undefined

  constructor(
    root: Prng,
    readonly options: ClusterSimOptions,
    traceLines: number,
    private readonly onFailure: (why: string) => void
  ) {
    this.world = new SimWorld({
      seed: root.fork("world").nextSeed(),
      traceLines,
      ...(options.autoScavenge === undefined ? {} : { epochMs: autoScavengeEpochMs(options.autoScavenge) })
    })
    this.network = new SimNetwork({
      clock: this.world.clock,
      prng: root.fork("network"),
      faults: options.network,
      trace: (line) => this.world.trace(line)
    })
    this.current = membersOf(options.voters, options.readOnlyReplica)
    this.disksPrng = root.fork("disks")
    this.storage = {
      ...defaultStorageConfig("/db"),
      chunkSize: options.chunkSize,
      memtableMaxEntries: options.memtableMaxEntries,
      preallocateChunks: false,
      readCacheBytes: 64 * 1024,
      eventIdCacheCapacity: 10_000,
      streamInfoCacheCapacity: 64
    }
    this.watch = new AssertionWatch((error) => this.fail(assertionFailure(error)))
    this.world.addNode(ClientsNode)
    this.world.addNode(ObserverNode)
    this.members.forEach((member, i) => {
      this.endpointLabels.set(member.http, member.name)
      this.disks.set(member.name, this.emptyDisk(member.name))
      const loaded = this.configFor(member)
      if (typeof loaded === "string") return this.fail(loaded)
      this.configs.set(member.name, loaded)
      this.world.addNode(member.name, { clockOffsetMs: options.clockSkewMs[i] ?? 0 })
    })
    if (this.failure === undefined) for (const m of this.members) this.start(m.name)
  }

  /** The member's configuration as a user gives it; auto-scavenge is on only in auto-scavenge seeds. */
  private configFor(member: Member): LoadedConfig | string {
    return memberConfig(member, this.current, this.options.timings, this.options.autoScavenge !== undefined)
  }

  /** The members now (a replaced member is the same name at its new HTTP endpoint). */
  get members(): ReadonlyArray<Member> {
    return this.current
  }

  get voters(): ReadonlyArray<Member> {
    return this.current.filter((m) => m.voter)
  }

  private emptyDisk(label: string): MemoryDisk {
    const disk = new MemoryDisk({ prng: this.disksPrng.fork(label) })
    disk.faulty = false
    return disk
  }

  fail(why: string): void {
    if (this.failure !== undefined) return
    this.failure = why
    this.onFailure(why)
  }

  member(name: string): Member {
    const member = this.members.find((m) => m.name === name)
    if (member === undefined) throw new Error(`no member ${name}`)
    return member
  }

  incarnation(name: string): number {
    return this.world.node(name).incarnation
  }

  /** The member's open lifetime, if it is up (open, not crashed). */
  open(name: string): OpenMember | undefined {
    return this.opened.get(name)
  }

  /** The committed position the member had when it last crashed (0 before any crash). */
  highestCommitted(name: string): number {
    return this.committedAtCrash.get(name) ?? 0
  }

  /** The member as the checkers name it: `n2`, or `n2@host:port` once it was replaced (another node). */
  label(name: string): string {
    return this.endpointLabels.get(this.member(name).http) ?? name
  }

  /** The member (as the checkers named it) that ran with this instance id. */
  labelOfInstance(instanceId: string): string | undefined {
    return this.byInstance.get(instanceId)
  }

  /** The member (as the checkers name it) at an HTTP endpoint, a replaced machine's old one included. */
  labelAt(endpoint: string): string {
    return this.endpointLabels.get(endpoint) ?? endpoint
  }

  /** Members replaced by a new node at least once. */
  get replacedMembers(): ReadonlyArray<string> {
    return [...this.replaced]
  }

  /** Up and stepping: open, not crashed, not paused. */
  running(name: string): boolean {
    return this.opened.has(name) && !this.paused.has(name)
  }

  /** Opens a lifetime of the member on its current SimNode; a member that does not open fails the run. */
  private start(name: string): void {
    const member = this.member(name)
    const loaded = this.configs.get(name)!
    const disk = this.disks.get(name)!
    const incarnation = this.incarnation(name)
    this.byInstance.set(instanceIdOf(member, incarnation), this.label(name))
    const life = Effect.gen(this, function* () {
      const scope = yield* Scope.make()
      const opened = yield* Effect.either(
        openMember(
          loaded,
          this.storage,
          disk.service,
          this.network.service(member.internal),
          instanceIdOf(member, incarnation),
          scope
        )
      )
      if (opened._tag === "Left") return this.fail(`${name} did not open: ${opened.left}`)
      if (this.incarnation(name) !== incarnation) return
      this.opened.set(name, opened.right)
      this.world.trace(`${name}#${incarnation} open`)
      yield* Effect.never
    })
    this.world.fork(name, this.quiet(life))
  }

  /** Runs on a member without its log lines, a failed assertion in any of its fibers failing the run. */
  private quiet<A>(effect: Effect.Effect<A>): Effect.Effect<A> {
    return Effect.supervised(Logger.withMinimumLogLevel(effect, LogLevel.None), this.watch)
  }

  /** Power loss: the member stops between two steps and its disk keeps what its durability model allows. */
  crash(name: string, prng: Prng, mode: CrashMode): { readonly tornWrites: number } {
    const open = this.opened.get(name)
    if (open !== undefined) this.committedAtCrash.set(name, open.committed())
    this.world.crash(name)
    this.scavenges.cut(this.label(name), this.world.now)
    this.opened.delete(name)
    this.paused.delete(name)
    this.crashed.add(name)
    const summary = this.disks.get(name)!.crash(prng, mode)
    this.world.trace(
      `crash ${name} ${mode} kept=${summary.opsKept} dropped=${summary.opsDropped} torn=${summary.tornWrites}`
    )
    return summary
  }

  restart(name: string): void {
    this.world.restart(name)
    this.crashed.delete(name)
    this.world.trace(`restart ${name}#${this.incarnation(name)}`)
    this.start(name)
  }

  /**
   * An operator replaces the member's dead machine: a new node with an empty disk, the same internal
   * (replication and gossip) address and another advertised HTTP endpoint (the next port), started now.
   * The member must be down (crashed). The old endpoint answers nothing any more.
   */
  replace(name: string): Member {
    const old = this.member(name)
    if (!this.crashed.has(name)) throw new Error(`${name} must be down to be replaced`)
    const [host, port] = old.http.split(":") as [string, string]
    const replacement: Member = { ...old, http: `${host}:${Number(port) + 1}` }
    this.retired.add(old.http)
    this.replaced.add(name)
    this.endpointLabels.set(replacement.http, `${name}@${replacement.http}`)
    this.current = this.current.map((m) => (m.name === name ? replacement : m))
    const loaded = this.configFor(replacement)
    if (typeof loaded === "string") {
      this.fail(loaded)
      return replacement
    }
    this.configs.set(name, loaded)
    this.disks.set(name, this.emptyDisk(`${name}@${replacement.http}`))
    this.world.trace(`replace ${name}: ${old.http} -> ${replacement.http}, empty disk`)
    this.restart(name)
    return replacement
  }

  pause(name: string): void {
    this.world.pause(name)
    this.paused.add(name)
    this.world.trace(`pause ${name}`)
  }

  resume(name: string): void {
    this.world.resume(name)
    this.paused.delete(name)
    this.world.trace(`resume ${name}`)
  }

  /**
   * Runs the world as `SimWorld.run` does; in auto-scavenge seeds every open member's scavenger is read
   * after each slice (one slice runs one node), so the node scavenges' order across members is exact.
   */
  run(options: SimRunOptions): SimRunResult {
    if (this.options.autoScavenge === undefined) return this.world.run(options)
    const until = options.until
    return this.world.run({
      ...options,
      until: () => {
        this.observeScavenges()
        return until?.() ?? false
      }
    })
  }

  private observeScavenges(): void {
    this.scavenges.tick()
    for (const [name, open] of this.opened) {
      const last = Effect.runSync(open.scavenger.last)
      const before = this.scavenges.runs.length
      const problem = this.scavenges.observe(this.label(name), String(this.incarnation(name)), last, this.world.now)
      if (problem !== undefined) this.fail(problem)
      // A leader resigns before its own node scavenge starts (a cluster of one scavenges itself).
      const scheduled = this.options.autoScavenge?.schedule !== undefined
      const started = this.scavenges.runs.length > before
      if (scheduled && started && this.voters.length > 1 && open.status?.state() === "Leader") {
        this.fail(`${this.label(name)}'s node scavenge started while it was the leader`)
      }
    }
    for (const run of this.scavenges.takeEnded()) {
      if (run.outcome === "Success") this.learnPoint(run)
    }
  }

  /**
   * A run that succeeded worked to its member's newest scavenge point (a run takes the newest one it has
   * not done, or writes one; one run at a time, so none is written before this read).
   */
  private learnPoint(run: NodeScavenge): void {
    const name = this.members.find((m) => this.label(m.name) === run.node)?.name
    const open = name === undefined ? undefined : this.opened.get(name)
    if (open === undefined) return
    this.world.fork(
      ObserverNode,
      Effect.map(Effect.either(latestScavengePoint(open.store)), (point) => {
        if (point._tag === "Right" && point.right !== undefined)
          run.point = { number: point.right.number, position: point.right.position }
      })
    )
  }

  /** The member's disk (the chunk checks read its files). */
  diskOf(name: string): MemoryDisk {
    return this.disks.get(name)!
  }

  /** Where every member keeps its store. */
  get dbDir(): string {
    return this.storage.dir
  }

  /** Members that say they lead now (a member without cluster wiring leads alone). */
  leaders(): Array<string> {
    return this.members
      .filter((m) => {
        const open = this.opened.get(m.name)
        if (open === undefined) return false
        return open.status === undefined ? true : open.status.state() === "Leader"
      })
      .map((m) => m.name)
  }

  /** Whether the member can exchange messages both ways with a quorum of voters (itself included) now. */
  reachesQuorum(name: string): boolean {
    const self = this.member(name)
    const reachable = this.voters.filter(
      (v) =>
        v.name === name ||
        (this.running(v.name) &&
          this.network.connected(self.internal, v.internal) &&
          this.network.connected(v.internal, self.internal))
    ).length
    return reachable >= Math.floor(this.voters.length / 2) + 1
  }

  /** The clients' way in: a request runs on the member's scheduler and clock. */
  get access(): ClusterAccess {
    return {
      nodes: this.members.map((m) => m.name),
      // A retired endpoint names a machine that is gone: the request finds nobody there (down).
      nodeAt: (endpoint) =>
        this.members.find((m) => m.http === endpoint)?.name ?? (this.retired.has(endpoint) ? RetiredNode : undefined),
      start: (name, request) => this.startRequest(name, request)
    }
  }

  private startRequest(name: string, request: HttpRequest): InFlight | undefined {
    const open = this.opened.get(name)
    if (open === undefined) return undefined
    const incarnation = this.incarnation(name)
    const handled: Effect.Effect<Handled> = Effect.gen(function* () {
      const committedBefore = open.committed()
      const reply = yield* open.handler(request)
      return { reply, committedBefore, committedAfter: open.committed() }
    })
    const fiber = this.world.fork(name, this.quiet(handled))
    return { node: name, fiber, dead: () => this.incarnation(name) !== incarnation || this.crashed.has(name) }
  }

  dispose(): void {
    this.world.dispose()
  }
}
