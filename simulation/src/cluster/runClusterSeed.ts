/**
 * One multi-node simulator run, entirely determined by its seed (`npm run sim -- --seed N --nodes 3`).
 *
 * Safety phase: clients append and read through any member (following 307s), the fault driver crashes,
 * restarts, pauses, partitions, isolates and resigns, and the observer checks every member throughout.
 * Liveness phase, as in TigerBeetle's VOPR: the faults stop, everything heals and restarts, and within a
 * bounded simulated time one leader must be elected that every member follows, a write must be taken, and
 * every member must catch up to it; a seed that does not converge fails. A last sample then settles every
 * write in doubt and holds every member's copy of every stream to the acknowledged history, exactly.
 */
import { Duration, Effect, Exit, type Fiber } from "effect"
import { Prng } from "@vellum/platform"
import { Auditor } from "../client.js"
import type { Coverage } from "../coverage.js"
import { StoreModel, ExpectedAny } from "../model.js"
import { httpStore } from "../httpStore.js"
import { AckLedger } from "./ackLedger.js"
import { ClusterClient, Sequencer } from "./clusterClient.js"
import { ClusterObserver } from "./clusterObserver.js"
import { chooseClusterOptions, type ClusterSimOptions, type VoterCount } from "./clusterOptions.js"
import { ClientsNode, ClusterWorld, ObserverNode } from "./clusterWorld.js"
import { instanceIdOf } from "./clusterNodes.js"
import { FaultDriver } from "./faultDriver.js"
import { AutoScavengeSeed } from "./autoScavengeSeed.js"
import { routed, Trip, type RouterOptions } from "./router.js"

export interface ClusterSeedResult {
  readonly seed: number
  readonly ok: boolean
  readonly failure: string | undefined
  readonly traceHash: string
  readonly options: ClusterSimOptions
  readonly acknowledged: number
  readonly indeterminate: number
  readonly settled: number
  /** Simulated ms the liveness phase took to converge (undefined when it did not). */
  readonly convergedInMs: number | undefined
  readonly simMs: number
  readonly steps: number
  readonly coverage: Coverage
  readonly lastTrace: ReadonlyArray<string>
}

export interface RunClusterSeedOptions {
  /** 1, 3 or 5 voters; the swarm picks when undefined. */
  readonly nodes?: VoterCount
  /** The auto-scavenge workload: on or off; the swarm picks (a share of multi-voter seeds) when undefined. */
  readonly autoScavenge?: boolean
  readonly traceLines?: number
  readonly overrides?: Partial<ClusterSimOptions>
  /** Runs on the converged cluster after the final checks (a test drives it further). */
  readonly afterConvergence?: (cluster: ClusterWorld, observer: ClusterObserver, auditor: Auditor) => void
}

const SampleMs = 500
const MaxSteps = 30_000_000

export const runClusterSeed = (seed: number, runOptions: RunClusterSeedOptions = {}): ClusterSeedResult => {
  const root = new Prng(seed)
  const options: ClusterSimOptions = {
    ...chooseClusterOptions(root.fork("cluster-options"), runOptions.nodes, runOptions.autoScavenge),
    ...runOptions.overrides
  }
  let trace: (line: string) => void = () => {}
  const auditor = new Auditor(new StoreModel(0), (line) => trace(line))
  const cluster = new ClusterWorld(root.fork("cluster"), options, runOptions.traceLines ?? 40, (why) =>
    auditor.fail(why)
  )
  const world = cluster.world
  trace = (line) => world.trace(line)
  const startedAt = world.now
  const ledger = new AckLedger()
  const sequencer = new Sequencer()
  const t = options.timings
  const router: RouterOptions = {
    maxHops: 3,
    hopTimeoutMs: t.commitTimeoutMs + 2_000,
    deadlineMs: 2 * t.leaderElectionTimeoutMs + 2_000
  }
  const clients = Array.from(
    { length: options.clients },
    (_, c) =>
      new ClusterClient(
        c,
        root.fork(`client-${c}`),
        options.streamsPerClient,
        cluster.access,
        router,
        auditor,
        ledger,
        sequencer
      )
  )
  const observer = new ClusterObserver(cluster, auditor, ledger, clients, sequencer)
  const driver = new FaultDriver(root.fork("faults"), cluster, auditor.coverage)
  const autoScavenge = new AutoScavengeSeed(root.fork("auto-scavenge-operator"), cluster, auditor)
  const failed = () => auditor.failure !== undefined
  let safety = true
  let clientsDone = 0
  const think = root.fork("think")

  const probePrng = root.fork("probe")
  let probes = 0
  /**
   * Runs the world until the cluster converges: every member open, one leader all follow, a probe append
   * (sent once `ready` holds) acknowledged, and every member caught up to it. The simulated ms it took, or
   * undefined (the run then failed, saying what was missing).
   */
  const converge = (phase: string, ready: () => boolean): number | undefined => {
    const began = world.now
    const probe = { bound: undefined as number | undefined, node: "" }
    world.fork(
      ClientsNode,
      Effect.gen(function* () {
        while (!ready()) yield* Effect.sleep(Duration.millis(50))
        for (const client of clients) for (const doubt of client.doubts.values()) doubt.overAt ??= sequencer.next()
        while (probe.bound === undefined && !failed()) {
          const trip = new Trip()
          const sentAt = sequencer.next()
          const store = httpStore(routed(cluster.access, probePrng.pick(cluster.access.nodes), trip, router, probePrng))
          const id = `00000000-0000-4000-8000-${(0xfff000000000 + probes++).toString(16)}`
          const answer = yield* Effect.either(
            store.append("probe", ExpectedAny, [
              { eventId: id, eventType: "probe", isJson: false, data: Buffer.from("p"), metadata: Buffer.alloc(0) }
            ])
          )
          const bound = trip.last?.committedAfter
          if (answer._tag === "Right" && answer.right._tag === "Appended" && bound !== undefined) {
            probe.bound = bound
            probe.node = trip.last!.node
            sequencer.acks.push({ sentAt, bound })
          } else yield* Effect.sleep(Duration.millis(100))
        }
      })
    )
    const converged = () => convergence(cluster, probe.bound) === undefined
    const result = cluster.run({
      until: () => failed() || converged(),
      maxSimMs: options.livenessMs,
      maxSteps: MaxSteps - world.totalSteps
    })
    if (!failed() && !converged()) {
      auditor.fail(
        `liveness (${phase}): no convergence within ${options.livenessMs} simulated ms (${result.reason}): ${convergence(cluster, probe.bound)?.()}`
      )
    }
    if (failed()) return undefined
    world.trace(
      `${phase}: converged in ${world.now - began} ms: leader ${cluster.leaders().join(",")}, probe on ${probe.node}`
    )
    return world.now - began
  }

  // ---- start: the cluster forms (a leader, the default users written and replicated) before clients run ----
  if (!failed()) converge("start", () => true)

  if (!failed()) {
    autoScavenge.start(() => safety && !failed())
    world.fork(
      ClientsNode,
      Effect.forEach(
        clients,
        (client) =>
          Effect.gen(function* () {
            while (safety && !failed()) {
              yield* Effect.sleep(Duration.millis(think.int(5, 60)))
              yield* client.step()
            }
            clientsDone++
          }),
        { concurrency: "unbounded", discard: true }
      )
    )
    world.fork(
      ObserverNode,
      Effect.gen(function* () {
        while (!failed()) {
          yield* Effect.sleep(Duration.millis(SampleMs))
          yield* observer.sample()
        }
      })
    )
    world.fork(
      ObserverNode,
      Effect.gen(function* () {
        while (!failed()) {
          yield* Effect.sleep(Duration.millis(10))
          observer.watch(world.now)
        }
      })
    )
  }

  // ---- safety: clients, faults, checks ----
  const safetyEnd = world.now + options.safetyMs
  while (!failed() && world.now < safetyEnd) {
    const gap = Math.min(driver.nextGap(), safetyEnd - world.now)
    const result = cluster.run({ until: failed, maxSimMs: gap, maxSteps: MaxSteps - world.totalSteps })
    if (result.reason === "step-limit") auditor.fail("livelock: the step budget ran out in the safety phase")
    if (!failed() && world.now < safetyEnd) driver.act(world.now)
  }

  // ---- liveness: faults end; one leader, a write taken, every member caught up ----
  safety = false
  let convergedInMs: number | undefined
  if (!failed()) {
    driver.healAll()
    // The clients' last requests end first, so the probe's acknowledgement settles every write in doubt.
    convergedInMs = converge(
      "after the faults",
      () => clientsDone === clients.length && !clients.some((c) => [...c.doubts.values()].some(running))
    )
    if (convergedInMs !== undefined) {
      auditor.coverage.hit("cluster.livenessReached")
      if (options.readOnlyReplica) auditor.coverage.hit("cluster.readOnlyReplicaCaughtUp")
      if (cluster.replacedMembers.length > 0) auditor.coverage.hit("autoScavenge.replacementCaughtUp")
      finalChecks(cluster, observer, ledger, clients, auditor)
      if (!failed()) autoScavenge.liveness()
      if (!failed()) autoScavenge.finalChecks()
      if (!failed()) runOptions.afterConvergence?.(cluster, observer, auditor)
    }
  }
  const succeeded = cluster.scavenges.runs.filter((r) => r.outcome === "Success").length
  if (succeeded > 0) auditor.coverage.hit("autoScavenge.nodeScavengeRan", succeeded)

  const result: ClusterSeedResult = {
    seed,
    ok: !failed(),
    failure: auditor.failure,
    traceHash: world.traceHash,
    options,
    acknowledged: ledger.count,
    indeterminate: auditor.indeterminate,
    settled: auditor.settledInRun,
    convergedInMs,
    simMs: world.now - startedAt,
    steps: world.totalSteps,
    coverage: auditor.coverage,
    lastTrace: world.traceLines
  }
  cluster.dispose()
  return result
}

/** Whether a write in doubt may still be running on a member. */
const running = (doubt: {
  readonly unfinished: { readonly fiber: Fiber.RuntimeFiber<unknown>; readonly dead: () => boolean } | undefined
}) => doubt.unfinished !== undefined && doubt.unfinished.fiber.unsafePoll() === null && !doubt.unfinished.dead()

/**
 * Why the cluster has not converged yet (undefined once it has), as a thunk: the run checks this after every
 * slice, and the description (every member's state) is wanted only when the run fails.
 */
const convergence = (cluster: ClusterWorld, probeBound: number | undefined): (() => string) | undefined => {
  const down = cluster.members.filter((m) => cluster.open(m.name) === undefined).map((m) => m.name)
  if (down.length > 0) return () => `not open: ${down.join(", ")}`
  const leaders = cluster.leaders()
  if (leaders.length !== 1)
    return () => `${leaders.length} members say they lead (${leaders.join(", ")}; ${states(cluster)})`
  const leader = leaders[0]!
  const leaderId = instanceIdOf(cluster.member(leader), cluster.incarnation(leader))
  const astray = cluster.members.filter((m) => {
    const status = cluster.open(m.name)!.status
    return status !== undefined && status.leader()?.instanceId !== leaderId
  })
  if (astray.length > 0) {
    return () => {
      const follows = astray.map(
        (m) => `${m.name} follows ${cluster.open(m.name)!.status!.leader()?.instanceId ?? "nobody"}`
      )
      return `${follows.join(", ")}, not ${leader} (${leaderId}) (${states(cluster)})`
    }
  }
  if (probeBound === undefined) return () => "no write taken yet"
  const behind = cluster.members.filter((m) => cluster.open(m.name)!.committed() < probeBound)
  if (behind.length > 0)
    return () => `${behind.map((m) => m.name).join(", ")} not caught up to ${probeBound} (${states(cluster)})`
  return undefined
}

/** Each open member's state, committed position and writer checkpoint, for a liveness failure. */
const states = (cluster: ClusterWorld): string =>
  cluster.members
    .map((m) => {
      const open = cluster.open(m.name)
      if (open === undefined) return `${m.name}: down`
      return `${m.name}: ${open.status?.state() ?? "?"} committed ${open.committed()} writer ${open.replica?.writerCheckpoint() ?? "?"}`
    })
    .join("; ")

/**
 * After convergence: one more sample of every member (all checks), every write in doubt settled, and every
 * member's copy of every client stream exactly the acknowledged history.
 */
const finalChecks = (
  cluster: ClusterWorld,
  observer: ClusterObserver,
  ledger: AckLedger,
  clients: ReadonlyArray<ClusterClient>,
  auditor: Auditor
) => {
  const world = cluster.world
  const fiber = world.fork(
    ObserverNode,
    Effect.gen(function* () {
      yield* observer.sample()
      yield* observer.settle()
      for (const client of clients) {
        for (const doubt of client.doubts.values()) auditor.fail(`${doubt.stream}: a write in doubt was never settled`)
      }
      for (const member of cluster.members) {
        const open = cluster.open(member.name)!
        for (const client of clients) {
          for (const stream of client.streams) {
            const read = yield* Effect.either(open.store.readStreamForward(stream, 0, 4096))
            if (read._tag === "Left")
              return auditor.fail(`final read of ${stream} on ${member.name}: ${read.left.message}`)
            const events = read.right._tag === "Success" ? read.right.events : []
            const history = ledger.historyOf(stream)
            if (events.length !== history.length || events.some((e, i) => e.event!.eventId !== history[i])) {
              return auditor.fail(
                `after convergence ${member.name} holds ${events.length} events of ${stream}, the acknowledged history ${history.length}`
              )
            }
          }
        }
      }
    })
  )
  cluster.run({ until: () => fiber.unsafePoll() !== null || auditor.failure !== undefined, maxSimMs: 10_000 })
  const exit = fiber.unsafePoll()
  if (exit === null) auditor.fail("the final checks did not finish within 10 simulated seconds")
  else if (Exit.isFailure(exit)) auditor.fail(`the final checks failed: ${String(exit.cause)}`)
}
