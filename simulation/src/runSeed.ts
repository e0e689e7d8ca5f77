/**
 * One simulator run, entirely determined by its seed.
 *
 * A node (the whole NodeApp on a MemoryDisk, driven through its HTTP handler; or with `transport: "direct"`
 * the bare EventStore) lives several lifetimes. In each, clients run operations
 * concurrently (checked against the reference model as they complete) until the driver crashes the node at
 * a random scheduler step — between any two steps, so also mid-batch, mid-rollover, mid-index-flush, mid
 * recovery from a failed write — or the clients are done. The disk then loses what was not synced (random or strict mode), the
 * node restarts on what survived, and the checkers verify recovery before clients continue. The last
 * lifetime ends with a clean stop and one more verified start. A node that refuses writes after a disk
 * error heals without a restart: the prober (prober.ts) frees space on a full disk and checks that writes
 * are taken again within a deadline.
 *
 * In most seeds an operator (operator.ts) scavenges alongside the clients — starting, stopping, scanning
 * `$all` — so crashes and disk faults hit scavenges too; the last lifetime runs one scavenge to its end and
 * verifies everything once more.
 *
 * Disk faults are paused while the node opens and while the checkers read (an operator would retry a
 * start that hit a transient read error; the checkers must see the truth), and run otherwise.
 */
import { Effect, Exit, LogLevel, Logger, Scope } from "effect"
import { MemoryDisk, Prng, SimWorld, assertionFailureIn } from "@vellum/platform"
import { defaultStorageConfig, type EventStoreService, type StorageConfig } from "@vellum/storage"
import type { Coverage } from "./coverage.js"
import { AclActor } from "./acl/aclActor.js"
import { AssertionWatch, assertionFailure } from "./assertionWatch.js"
import { Auditor, SimClient } from "./client.js"
import { verifyAfterRestart, verifyStored } from "./checkers.js"
import { StoreModel } from "./model.js"
import { chooseOptions, fitted, weakHash, type SimOptions } from "./options.js"
import { finalScavenge, runOperator } from "./operator.js"
import { OpsTicker } from "./opsTicker.js"
import { clientPause, crashDowntimeMs, expiryWait } from "./pacing.js"
import { learnScavengePoints } from "./scavengePoints.js"
import { runProber, type ProberState } from "./prober.js"
import { markDiskFaults } from "./faultMarks.js"
import { isRefusalOf, plantDamage, repairDamage, type PlantedDamage } from "./damageAtRest.js"
import { ScavengeFocus } from "./scavengeWorkload.js"
import { openNode, type Transport } from "./simNode.js"
import { SubscriptionsWorkload } from "./subscriptions/subsWorkload.js"
import { ProjectionsWorkload } from "./projections/projectionsWorkload.js"
import type { ProjectionsService } from "@vellum/projections"

export interface SeedResult {
  readonly seed: number
  readonly ok: boolean
  readonly failure: string | undefined
  readonly traceHash: string
  readonly options: SimOptions
  readonly crashes: number
  readonly acknowledged: number
  readonly indeterminate: number
  /** Disk-full periods healed without a restart, and indeterminate operations settled during the run. */
  readonly healed: number
  readonly settledInRun: number
  /** Scavenges the operator started. */
  readonly scavenges: number
  /** Simulated time the run took, in ms (from the world's start to its end). */
  readonly simMs: number
  /** Messages the subscriptions workload's consumers got (0 when it did not run). */
  readonly subscriptionCopies: number
  /** Links the projections workload checked against their records at the end (0 when it did not run). */
  readonly projectionLinks: number
  /** How often each rule ran (coverage.ts). */
  readonly coverage: Coverage
  readonly steps: number
  readonly lastTrace: ReadonlyArray<string>
}

export interface RunSeedOptions {
  /** Keep this many trace lines for the failure report (default 40). */
  readonly traceLines?: number
  /** Override the swarm's choices (tests use this to pin a configuration). */
  readonly overrides?: Partial<SimOptions>
  /** How clients reach the node: its HTTP app (default) or the EventStore service directly. */
  readonly transport?: Transport
  /** Called with the store of every lifetime once it is open (tests plant faults inside the node here). */
  readonly onOpen?: (store: EventStoreService) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Builds the projections service the workload drives in each lifetime instead of the node's (tests prove
   * the workload and its checks on a stand-in with this); built in the lifetime's scope, so a crash drops it.
   */
  readonly projectionsService?: (store: EventStoreService) => Effect.Effect<ProjectionsService, never, Scope.Scope>
}

const NODE = "node-1"

export const runSeed = (seed: number, runOptions: RunSeedOptions = {}): SeedResult => {
  const root = new Prng(seed)
  const options: SimOptions = fitted({ ...chooseOptions(root.fork("options")), ...runOptions.overrides })
  const transport = runOptions.transport ?? "http"
  const world = new SimWorld({ seed: root.fork("world").nextSeed(), traceLines: runOptions.traceLines ?? 40 })
  const startedAtMs = world.now
  const disk = new MemoryDisk({ prng: root.fork("disk"), faults: options.faults, capacityBytes: options.capacityBytes })
  const faultsWanted = options.faults !== undefined || options.capacityBytes !== undefined
  disk.faulty = false
  // A sync takes time, so a crash can fall between a batch's write and its sync: torn tails for recovery to cut.
  disk.syncMillis = 1
  const driver = root.fork("driver")
  const operatorPrng = root.fork("operator")
  const operatorPausePrng = root.fork("operator-pause")
  const proberPrng = root.fork("prober")
  const downtime = root.fork("downtime")
  const damagePrng = root.fork("damage")
  const crashTiming = root.fork("crashTiming")
  /** Damage planted after the last crash, which the next open must refuse (damageAtRest.ts). */
  let planted: PlantedDamage | undefined
  const probing: ProberState = { probing: false }
  const readsReliable =
    options.faults === undefined || (options.faults.readError === 0 && options.faults.bitFlipOnRead === 0)
  // The store's event-id cache (capacity 10,000 below) keeps up to 9,999 ids over a restart; the model counts
  // on half of that, leaving room for the events it does not track (users, scavenge history).
  const auditor = new Auditor(new StoreModel(5_000), (line) => world.trace(line))
  const streamNames = Array.from({ length: options.clients }, (_, c) =>
    Array.from({ length: options.streamsPerClient }, (_, i) => `c${c}-s${i}`)
  ).flat()
  // Writes to the streams a scavenge works on, past its point (scavengeWorkload.ts): only where one runs.
  const focus =
    options.scavenge === undefined ? undefined : new ScavengeFocus(root.fork("scavengeWrites"), auditor, streamNames)
  const clients = Array.from(
    { length: options.clients },
    (_, c) =>
      new SimClient(c, root.fork(`client-${c}`), options.streamsPerClient, options.chunkSize >= 4096 ? 200 : 20, focus)
  )
  // Users and ACLs (HTTP only: the direct transport has no authentication): one more client, on its own forks.
  const anonymousStreamAccess = root.fork("acl-node").chance(0.5)
  const aclActor =
    transport === "http"
      ? new AclActor(
          clients.length,
          root.fork("acl"),
          anonymousStreamAccess,
          readsReliable,
          clients.flatMap((c) => c.streams)
        )
      : undefined
  if (aclActor !== undefined) clients.push(aclActor)
  const pauses = clients.map((c) => root.fork(`pause-${c.id}`))
  // What the workloads beside the clients report through.
  const hooks = {
    coverage: auditor.coverage,
    trace: (line: string) => world.trace(line),
    fail: (message: string) => auditor.fail(message),
    failed: () => auditor.failure !== undefined
  }
  // Persistent subscriptions (HTTP only: the bare store runs no service), on their own fork.
  const subscriptions =
    options.subscriptions && transport === "http"
      ? new SubscriptionsWorkload(root.fork("subscriptions"), hooks)
      : undefined
  // Projections (HTTP only, as above), on their own fork.
  const projections =
    options.projections && transport === "http" ? new ProjectionsWorkload(root.fork("projections"), hooks) : undefined

  const config: StorageConfig = {
    ...defaultStorageConfig("/db"),
    chunkSize: options.chunkSize,
    memtableMaxEntries: options.memtableMaxEntries,
    preallocateChunks: options.preallocateChunks,
    readCacheBytes: 64 * 1024,
    maxEventSize: options.maxEventSize,
    // Projections write several events per client event: room for them beside the ids the model counts on.
    eventIdCacheCapacity: projections === undefined ? 10_000 : 100_000,
    streamInfoCacheCapacity: 64,
    ...(options.weakHash ? { streamHash: weakHash } : {}),
    ...(options.checkpointLagBytes !== undefined ? { checkpointLagBytes: options.checkpointLagBytes } : {})
  }

  let clientsDone = 0
  // The subscriptions workload's stretch of the lifetime is over (true when it does not run).
  let subscriptionsDone = true
  let projectionsDone = true
  let crashes = 0
  // A failed assertion in any fiber of the node fails the seed with its message (and so stops the run).
  const watch = new AssertionWatch((error) => auditor.fail(assertionFailure(error)))
  const lifetime = (ops: number, final: boolean, life: number) =>
    Effect.gen(function* () {
      disk.faulty = false
      const damage = planted
      planted = undefined
      if (damage !== undefined) {
        // Acknowledged data is damaged: the open must refuse, naming chunk and position, and cut nothing.
        const attempt = yield* Scope.make()
        const refused = yield* Effect.either(
          openNode(transport, config, disk.service, attempt, anonymousStreamAccess, projections !== undefined)
        )
        yield* Scope.close(attempt, Exit.void)
        if (refused._tag === "Right")
          return auditor.fail(
            `damage to acknowledged data at ${damage.path}, log position ${damage.position}, was not refused: the node opened`
          )
        if (!isRefusalOf(damage, refused.left))
          return auditor.fail(
            `the node refused to open for another reason than the damage at ${damage.path}, log position ${damage.position}: ${refused.left}`
          )
        auditor.coverage.hit("recovery.damage.refused")
        world.trace(`damage at ${damage.path} position ${damage.position} refused; repaired`)
        repairDamage(disk, damage)
      }
      const scope = yield* Scope.make()
      const opened = yield* Effect.either(
        openNode(transport, config, disk.service, scope, anonymousStreamAccess, projections !== undefined)
      )
      if (opened._tag === "Left") return auditor.fail(`the node did not open after recovery: ${opened.left}`)
      // A second node on the same data directory must be refused while this one runs (its lock).
      const secondScope = yield* Scope.make()
      const second = yield* Effect.either(openNode(transport, config, disk.service, secondScope))
      yield* Scope.close(secondScope, Exit.void)
      if (second._tag === "Right" || !second.left.includes("in use by another node")) {
        return auditor.fail(
          `a second node on the data directory of a running one was not refused: ${second._tag === "Left" ? second.left : "it opened"}`
        )
      }
      const {
        store,
        clients: node,
        scavenge,
        handler,
        scavenger,
        subscriptions: service,
        projections: projectionsService
      } = opened.right
      const tail = store.engine.log.recovered
      if (tail !== undefined && tail.end > tail.checkpoint) auditor.coverage.hit("recovery.pastCheckpoint.kept")
      if (tail !== undefined && tail.cutBytes > 0) auditor.coverage.hit("recovery.tornTail.truncated")
      focus?.attach(scavenger)
      if (handler !== undefined) aclActor?.connect(handler)
      const pointsSeen = { last: -2 }
      auditor.learnPoints = Effect.match(learnScavengePoints(store, auditor, pointsSeen), {
        onFailure: () => false,
        onSuccess: () => true
      })
      if (runOptions.onOpen !== undefined) yield* Scope.extend(runOptions.onOpen(store), scope)
      const checkFailed = (e: { readonly message: string }) =>
        auditor.fail(`a check read failed with faults paused: ${e.message}`)
      const checked = yield* Effect.either(verifyAfterRestart(store, auditor, clients))
      if (checked._tag === "Left") return checkFailed(checked.left)
      world.trace(`lifetime verified at ${store.stats().committedPosition}`)
      auditor.coverage.hit("restart.verified")
      const operator =
        options.scavenge === undefined || focus === undefined
          ? undefined
          : {
              control: scavenge,
              store,
              auditor,
              prng: operatorPrng,
              pausePrng: operatorPausePrng,
              options: options.scavenge,
              readsReliable,
              focus
            }
      if (final && operator !== undefined && auditor.failure === undefined) {
        yield* finalScavenge(operator, disk.capacityBytes !== undefined)
        const again = yield* Effect.either(verifyStored(store, auditor, clients))
        if (again._tag === "Left") return checkFailed(again.left)
        world.trace(`final scavenge verified at ${store.stats().committedPosition}`)
      }
      // Faults still paused: the groups exist, and what their checkpoints made durable is known.
      const subs =
        subscriptions !== undefined && service !== undefined && auditor.failure === undefined
          ? (yield* subscriptions.begin(store, service, life))
            ? { workload: subscriptions, service }
            : undefined
          : undefined
      if (final && subs !== undefined && auditor.failure === undefined) yield* subs.workload.drain(store, subs.service)
      // Likewise: the projections exist and are enabled (a node without the service fails the seed). In the last
      // lifetime a full disk is freed first, as the prober frees it while clients run: the projections' own writes
      // (links, checkpoints) would otherwise wait for space for ever, and their catch-up could never be checked.
      if (final && projections !== undefined && disk.capacityBytes !== undefined) {
        disk.capacityBytes = undefined
        world.trace("space freed for the projections' final checks")
      }
      const standIn = runOptions.projectionsService
      const proj =
        projections !== undefined && auditor.failure === undefined
          ? yield* projections.begin(
              store,
              standIn === undefined ? projectionsService : yield* Scope.extend(standIn(store), scope),
              life
            )
          : undefined
      if (final && proj !== undefined && auditor.failure === undefined) yield* projections!.finish(store, proj)
      if (final || auditor.failure !== undefined) {
        yield* Scope.close(scope, Exit.void)
        clientsDone = clients.length
        return
      }
      disk.faulty = faultsWanted
      const ticker = new OpsTicker()
      const prober = faultsWanted
        ? runProber({ store, disk, auditor, clients, prng: proberPrng }, ticker, probing)
        : Effect.void
      const work = Effect.forEach(
        clients,
        (client) =>
          Effect.gen(function* () {
            for (let k = 0; k < ops && auditor.failure === undefined; k++) {
              if (options.thinkTimeMs > 0) yield* Effect.sleep(client.prng.int(0, options.thinkTimeMs))
              yield* clientPause(pauses[client.id]!)
              yield* expiryWait(pauses[client.id]!, auditor.model, auditor.times, client.streams)
              yield* client.step(node, auditor)
              yield* ticker.tick
            }
            clientsDone++
          }),
        { concurrency: "unbounded", discard: true }
      )
      yield* Effect.all(
        [
          Effect.ensuring(work, ticker.finish),
          operator === undefined ? Effect.void : runOperator(operator, ticker),
          prober,
          subs === undefined
            ? Effect.void
            : Effect.ensuring(
                subs.workload.run(store, subs.service),
                Effect.sync(() => (subscriptionsDone = true))
              ),
          proj === undefined
            ? Effect.void
            : Effect.ensuring(
                projections!.run(store, proj),
                Effect.sync(() => (projectionsDone = true))
              )
        ],
        {
          concurrency: "unbounded",
          discard: true
        }
      )
      disk.faulty = false
      yield* Scope.close(scope, Exit.void)
    })

  const stepsAt = () => world.totalSteps
  for (let life = 0; life <= options.incarnations && auditor.failure === undefined; life++) {
    const final = life === options.incarnations
    if (life === 0) world.addNode(NODE)
    else world.restart(NODE)
    clientsDone = 0
    subscriptionsDone = subscriptions === undefined || final
    projectionsDone = projections === undefined || final
    probing.probing = false
    // The node's log lines (scavenge progress above all) would cost time and bury the trace; the trace
    // lines are the record of a run.
    const root = world.fork(
      NODE,
      Effect.supervised(
        Logger.withMinimumLogLevel(lifetime(options.opsPerIncarnation, final, life), LogLevel.None),
        watch
      )
    )
    const crashAt = final
      ? Number.POSITIVE_INFINITY
      : driver.int(options.crashAfterSteps[0], options.crashAfterSteps[1])
    // Half the crashes come at the first sync of a chunk file after some disk writes: power lost between a
    // batch's write and its sync leaves a torn tail for recovery to cut. (Counted in disk writes, which grow
    // while the world runs; the world's step count is only brought up to date when a run returns.)
    const inSync = !final && crashTiming.chance(0.5)
    const writesFrom = disk.stats.writes + (inSync ? crashTiming.int(1, 300) : 0)
    const crashDue = () =>
      stepsAt() - start >= crashAt ||
      (inSync && disk.stats.writes >= writesFrom && disk.syncingFiles().some((p) => p.includes("/chunk-")))
    const start = stepsAt()
    const result = world.run({
      // A probe running when the clients are done gets its verdict first (liveness after a disk error).
      until: () =>
        auditor.failure !== undefined ||
        (clientsDone === clients.length && subscriptionsDone && projectionsDone && !probing.probing) ||
        crashDue() ||
        focus?.crashWanted === true,
      maxSteps: 5_000_000
    })
    const rootExit = root.unsafePoll()
    const broken = rootExit !== null && Exit.isFailure(rootExit) ? assertionFailureIn(rootExit.cause) : undefined
    if (broken !== undefined) auditor.fail(assertionFailure(broken))
    if (result.reason === "quiescent" && clientsDone < clients.length && auditor.failure === undefined) {
      auditor.fail(`deadlock: the node went quiet with ${clients.length - clientsDone} clients unfinished`)
    }
    if (result.reason === "step-limit") auditor.fail("livelock: the step budget ran out")
    if (final || auditor.failure !== undefined) break
    // Power loss: the node stops between two steps; the disk keeps only what its durability model allows.
    const syncingAtCrash = disk.syncingFiles().length
    world.crash(NODE)
    focus?.crashed()
    crashes++
    const mode = driver.chance(0.3) ? "strict" : "random"
    const summary = disk.crash(driver, mode)
    world.trace(
      `crash ${mode} inSync=${inSync} syncing=${syncingAtCrash} kept=${summary.opsKept} dropped=${summary.opsDropped} torn=${summary.tornWrites}`
    )
    auditor.coverage.hit(mode === "strict" ? "crash.strict" : "crash.random")
    if (summary.tornWrites > 0) auditor.coverage.hit("crash.tornWrite")
    if (options.damageAtRest && damagePrng.chance(0.5)) {
      planted = plantDamage(disk, config.dir, options.chunkSize, options.checkpointLagBytes, damagePrng)
      if (planted !== undefined) world.trace(`damage at rest: ${planted.path} position ${planted.position}`)
    }
    if (disk.capacityBytes !== undefined && driver.chance(0.5)) disk.capacityBytes = undefined // an operator freed space
    // The node stays down a while: the next lifetime (and a scavenge it resumes) starts later.
    world.advance(crashDowntimeMs(downtime))
    auditor.coverage.hit("clock.advancedAcrossCrash")
  }
  markDiskFaults(auditor.coverage, disk.stats)
  const traceHash = world.traceHash
  const lastTrace = world.traceLines
  const simMs = world.now - startedAtMs
  world.dispose()
  return {
    seed,
    ok: auditor.failure === undefined,
    failure: auditor.failure,
    traceHash,
    options,
    crashes,
    acknowledged: auditor.acknowledged,
    indeterminate: auditor.indeterminate,
    healed: auditor.healed,
    settledInRun: auditor.settledInRun,
    scavenges: auditor.scavenges,
    subscriptionCopies: subscriptions?.copies ?? 0,
    projectionLinks: projections?.linksChecked ?? 0,
    simMs,
    coverage: auditor.coverage,
    steps: world.totalSteps,
    lastTrace
  }
}
