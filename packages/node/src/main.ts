/**
 * The node's entry point (`npm start`, `npx vellum`): reads the configuration (CLI > env > YAML > defaults),
 * opens the store (./data, or memory with --mem-db), creates the default users on first start, and serves
 * the EventStoreDB HTTP API on http://127.0.0.1:2113 until SIGTERM/SIGINT or POST /admin/shutdown.
 *
 * The one place where the real world enters: the real disk, OS randomness, the process's figures, stdout
 * and signals. Everything else is in NodeApp.ts, which the simulator runs on its own world.
 *
 * A stop is graceful: the server stops accepting, running requests (appends waiting for their batch) are
 * answered, the index memtable is flushed so the next start replays little, then the store closes.
 */
import * as crypto from "node:crypto"
import * as path from "node:path"
import { Cause, Effect, Exit, Layer, Random, Ref, Schema, Scope } from "effect"
import { Disk, MemoryDisk, NodeDisk, NodeNetwork, setAssertionFailedHandler } from "@vellum/platform"
import { ClusterStatus, isSingleNode, peerAddressOf } from "@vellum/cluster"
import { EventStore } from "@vellum/storage"
import { Users } from "@vellum/security"
import {
  NodeInfo,
  NodeMetrics,
  Shutdown,
  makeOffThreadParser,
  NodeMetricsLive,
  ProcessStatsLive,
  serveHttp
} from "@vellum/http"
import {
  autoScavengeEnablement,
  describeAutoScavengeEnablement,
  formatConfigError,
  infoOptions,
  loadConfig,
  readConfigFileFromDisk,
  toClusterSettings,
  toServeLimits,
  type LoadedConfig
} from "./config/index.js"
import * as NodeApp from "./NodeApp.js"
import * as Logging from "./logging.js"
import { openLogFile } from "./live/logFile.js"
import { INSECURE_WARNING, startupSummary } from "./startupSummary.js"

const stdout = (line: string) => process.stdout.write(line + "\n")

/** A start-up failure an operator fixes from one line on stderr (a port taken, the data directory in use, a log directory not writable). */
class CannotStart extends Schema.TaggedError<CannotStart>()("CannotStart", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** The node stopped with an error it has already logged: only the exit code is left to set. */
class NodeFailed extends Schema.TaggedError<NodeFailed>()("NodeFailed", { message: Schema.String }) {}

/** Effect's default Random is seeded from Math.random; salts and ids get a seed from the OS instead. */
const osRandom = Layer.succeed(Random.Random, Random.make(crypto.randomBytes(16).toString("hex")))

/**
 * Under `npx vellum` npm runs the node through a shell and forwards SIGTERM/SIGINT to that shell only: the
 * shell dies of it and the node, left running, would keep the data directory. So a node npm started stops
 * as soon as its parent is gone (`npm start` execs the node, whose parent is then npm itself).
 */
const stopWithLauncher = (stop: () => void) => {
  if (process.env["npm_command"] === undefined) return
  const parent = process.ppid
  const watch = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(watch)
    stop()
  }, 200)
  watch.unref()
}

/** Set when the node stopped because it could not go on as a cluster member (it then exits with an error). */
let failedAsMember: string | undefined

const serve = (loaded: LoadedConfig) =>
  Effect.gen(function* () {
    const config = loaded.config
    for (const warning of loaded.warnings) yield* Effect.logWarning(warning)
    const changed = infoOptions(loaded).filter((row) => row.configurationSource !== "<DEFAULT>")
    yield* Effect.logDebug(
      `Options set: ${changed.map((row) => `${row.name}=${row.value} (${row.configurationSource})`).join(", ") || "none"}`
    )
    const handle = yield* NodeApp.makeNodeHandler(loaded, { appendBodyParser: yield* makeOffThreadParser() })
    const clusterStatus = yield* ClusterStatus
    const shutdown = yield* Shutdown
    const info = yield* NodeInfo
    const metrics = yield* NodeMetrics
    yield* Effect.scoped(
      Effect.gen(function* () {
        // Before the start-up line: whoever waits for it may send a signal at once.
        const onSignal = (signal: string) => () => Effect.runFork(shutdown.request(signal))
        // `on`, not `once`: Ctrl-C under `npm start` reaches the node twice (from the terminal and forwarded by
        // npm), and a second signal without a listener would kill it before it has stopped.
        process.on("SIGTERM", onSignal("SIGTERM"))
        process.on("SIGINT", onSignal("SIGINT"))
        stopWithLauncher(onSignal("the npm process that started the node exited"))
        yield* serveHttp({
          host: config.NodeIp,
          port: config.NodePort,
          handle,
          onConnections: metrics.setOpenConnections,
          ...toServeLimits(config)
        })
        // Other members pass requests for the leader here (a follower passes on the persistent subscription routes).
        yield* NodeApp.serveForwardedRequests(handle)
        // Before the summary, which whoever waits for the start may act on at once.
        yield* Effect.logInfo(describeAutoScavengeEnablement(autoScavengeEnablement(config)))
        const summary = startupSummary(loaded, {
          version: NodeApp.VELLUM_VERSION,
          dbDir: config.MemDb ? undefined : path.resolve(config.Db),
          configFile: loaded.configFile === undefined ? undefined : path.resolve(loaded.configFile),
          createdDefaultUsers: (yield* Users).createdDefaultUsers,
          ...(clusterStatus.clusterSize > 1 || clusterStatus.isReadOnlyReplica
            ? { cluster: { size: clusterStatus.clusterSize, readOnlyReplica: clusterStatus.isReadOnlyReplica } }
            : {})
        })
        yield* Effect.logInfo(summary)
        if (config.Insecure) yield* Effect.logWarning(INSECURE_WARNING)
        // A member that cannot go on (a cut past MaxTruncation) stops as if asked to, with the reason.
        const memberFailure = Effect.map(clusterStatus.failure, (why) => {
          failedAsMember = why
          return `the node cannot go on as a cluster member: ${why}`
        })
        const reason = yield* Effect.raceFirst(shutdown.requested, memberFailure)
        yield* Effect.logInfo(`Stopping: ${reason}`)
        // /health/live answers 503 from here on, so load balancers stop sending while we drain.
        yield* Ref.set(info.state, "ShuttingDown")
      })
    )
    // The server is closed and every running request answered: flush the index so a restart replays little.
    const store = yield* EventStore
    yield* Effect.catchAll(store.flushIndex, (e) => Effect.logWarning(`index flush on stop failed: ${e.message}`))
    yield* Effect.logInfo("Stopped")
  })

const program = Effect.gen(function* () {
  const outcome = yield* loadConfig({
    argv: process.argv.slice(2),
    env: process.env,
    readFile: readConfigFileFromDisk,
    version: NodeApp.VELLUM_VERSION
  })
  if (outcome._tag !== "Start") {
    stdout(outcome.text)
    return
  }
  const loaded = outcome.loaded
  const config = loaded.config
  const dbDir = config.MemDb ? "/vellum-memory" : path.resolve(config.Db)
  const disk = config.MemDb ? MemoryDisk.layer(new MemoryDisk()) : NodeDisk.layer
  const logFile =
    config.Log === ""
      ? undefined
      : yield* Effect.try({
          try: () => openLogFile(path.resolve(config.Log)),
          catch: (error) =>
            new CannotStart({
              message: `cannot write the log in ${path.resolve(config.Log)}: ${error instanceof Error ? error.message : String(error)}`,
              cause: error
            })
        })
  const logger = Logging.layer(config, { console: stdout, file: logFile?.write })
  const instanceId = crypto.randomUUID()
  const scope = yield* Scope.make()
  // A cluster member's node-to-node network: its internal endpoint, where peers prove the cluster secret.
  const clusterSettings = toClusterSettings(config)
  const network = isSingleNode(clusterSettings)
    ? undefined
    : yield* Scope.extend(
        NodeNetwork.make({
          self: peerAddressOf(clusterSettings.internal),
          ...(clusterSettings.internalListen !== undefined ? { listen: clusterSettings.internalListen } : {}),
          clusterSecret: clusterSettings.clusterSecret
        }),
        scope
      )
  const app = NodeApp.layer(loaded, {
    dbDir,
    instanceId,
    processStats: ProcessStatsLive.layer({ dbPath: dbDir }),
    metrics: NodeMetricsLive.layer,
    ...(network !== undefined ? { network } : {})
  })
  const exit = yield* Effect.exit(
    serve(loaded).pipe(Effect.provide(Layer.provide(app, disk)), Effect.provide(logger), Scope.extend(scope))
  )
  yield* Scope.close(scope, Exit.void)
  if (Exit.isFailure(exit)) {
    const failure = Cause.failureOption(exit.cause)
    // A port taken, or the data directory held by another node: one line, not a stack.
    if (failure._tag === "Some" && (failure.value._tag === "ListenFailed" || failure.value._tag === "StorageLocked")) {
      logFile?.close()
      return yield* Effect.fail(new CannotStart({ message: failure.value.message, cause: failure.value }))
    }
    yield* Effect.logError(`The node stopped with an error: ${Cause.pretty(exit.cause)}`).pipe(Effect.provide(logger))
  }
  logFile?.close()
  if (Exit.isFailure(exit) || failedAsMember !== undefined)
    return yield* Effect.fail(new NodeFailed({ message: "the node stopped with an error" }))
}).pipe(Effect.provide(osRandom))

// A broken invariant stops the process at once with its message: carrying on could corrupt data, and a
// background fiber that died of it would leave a node that only hangs.
setAssertionFailedHandler((error) => {
  process.stderr.write(`Vellum stopped: ${error.message}\n${error.stack ?? ""}\n`)
  process.exit(70)
})

Effect.runPromiseExit(program.pipe(Effect.provideService(Disk, NodeDisk.make))).then((exit) => {
  if (Exit.isSuccess(exit)) process.exit(0)
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && failure.value._tag === "ConfigError") {
    process.stderr.write(formatConfigError(failure.value) + "\n")
  } else if (failure._tag === "Some" && failure.value._tag === "CannotStart") {
    process.stderr.write(`Vellum cannot start: ${failure.value.message}\n`)
  } else if (!(failure._tag === "Some" && failure.value._tag === "NodeFailed")) {
    process.stderr.write(Cause.pretty(exit.cause) + "\n")
  }
  process.exit(1)
})
