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
import { Cause, Effect, Exit, Layer, Logger, Random, Ref, Scope } from "effect"
import { Disk, MemoryDisk, NodeDisk, jsonLoggerLayer, layerMemory } from "@vellum/platform"
import { EventStore } from "@vellum/storage"
import { NodeInfo, Shutdown, makeOffThreadParser, nodeMetricsLive, processStatsLive, serveHttp } from "@vellum/http"
import { formatConfigError, loadConfig, readConfigFileFromDisk, toLogLevel, toServeLimits, type LoadedConfig } from "./config/index.js"
import { VELLUM_VERSION, makeNodeHandler, nodeAppLayer } from "./NodeApp.js"

const stdout = (line: string) => process.stdout.write(line + "\n")

/** Effect's default Random is seeded from Math.random; salts and ids get a seed from the OS instead. */
const osRandom = Layer.succeed(Random.Random, Random.make(crypto.randomBytes(16).toString("hex")))

const serve = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const config = loaded.config
    for (const warning of loaded.warnings) yield* Effect.logWarning(warning)
    const handle = yield* makeNodeHandler(loaded, { appendBodyParser: yield* makeOffThreadParser() })
    const shutdown = yield* Shutdown
    const info = yield* NodeInfo
    yield* Effect.scoped(Effect.gen(function*() {
      yield* serveHttp({ host: config.NodeIp, port: config.NodePort, handle, ...toServeLimits(config) })
      yield* Effect.logInfo(`Vellum ${VELLUM_VERSION} listening on http://${config.NodeIp}:${config.NodePort}`).pipe(
        Effect.annotateLogs({ db: config.MemDb ? "(memory)" : path.resolve(config.Db), insecure: config.Insecure })
      )
      const onSignal = (signal: string) => () => Effect.runFork(shutdown.request(signal))
      process.once("SIGTERM", onSignal("SIGTERM"))
      process.once("SIGINT", onSignal("SIGINT"))
      const reason = yield* shutdown.requested
      yield* Effect.logInfo(`Stopping: ${reason}`)
      // /health/live answers 503 from here on, so load balancers stop sending while we drain.
      yield* Ref.set(info.state, "ShuttingDown")
    }))
    // The server is closed and every running request answered: flush the index so a restart replays little.
    const store = yield* EventStore
    yield* Effect.catchAll(store.flushIndex, (e) => Effect.logWarning(`index flush on stop failed: ${e.message}`))
    yield* Effect.logInfo("Stopped")
  })

const program = Effect.gen(function*() {
  const outcome = yield* loadConfig({ argv: process.argv.slice(2), env: process.env, readFile: readConfigFileFromDisk, version: VELLUM_VERSION })
  if (outcome._tag !== "Start") {
    stdout(outcome.text)
    return
  }
  const loaded = outcome.loaded
  const config = loaded.config
  const dbDir = config.MemDb ? "/vellum-memory" : path.resolve(config.Db)
  const disk = config.MemDb ? layerMemory(new MemoryDisk()) : Layer.succeed(Disk, NodeDisk.make)
  const logger = config.LogConsoleFormat === "Json"
    ? jsonLoggerLayer(stdout, toLogLevel(config.LogLevel))
    : Logger.minimumLogLevel(toLogLevel(config.LogLevel))
  const instanceId = crypto.randomUUID()
  const app = nodeAppLayer(loaded, { dbDir, instanceId, processStats: processStatsLive({ dbPath: dbDir }), metrics: nodeMetricsLive })
  const scope = yield* Scope.make()
  const exit = yield* Effect.exit(serve(loaded).pipe(
    Effect.provide(Layer.provide(app, disk)),
    Effect.provide(logger),
    Scope.extend(scope)
  ))
  yield* Scope.close(scope, Exit.void)
  if (Exit.isFailure(exit)) {
    yield* Effect.logError(`The node stopped with an error: ${Cause.pretty(exit.cause)}`)
    return yield* Effect.fail("failed" as const)
  }
}).pipe(Effect.provide(osRandom))

Effect.runPromiseExit(program.pipe(Effect.provideService(Disk, NodeDisk.make))).then((exit) => {
  if (Exit.isSuccess(exit)) process.exit(0)
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && typeof failure.value === "object" && failure.value._tag === "ConfigError") {
    process.stderr.write(formatConfigError(failure.value) + "\n")
  } else if (!(failure._tag === "Some" && failure.value === "failed")) {
    process.stderr.write(Cause.pretty(exit.cause) + "\n")
  }
  process.exit(1)
})
