/**
 * npm run bench:peers — Vellum beside PostgreSQL and Redis, in one sitting, on the same workloads.
 *
 * Starts the three servers as child processes on free ports with their data under `.bench-data/peers`
 * (removed at the end): the compiled Vellum node as bench:http starts it, PostgreSQL with a message-db-style
 * schema at its default durability (peersPostgres.ts), Redis streams with `appendfsync always`
 * (peersRedis.ts). A server that is not installed is skipped, with the command that installs it. Every server
 * first gets the same read data (streams of 100 events). Then each workload runs against each server in turn,
 * from a fresh driver process (peersDriver.ts: the same closed loop, event bodies and client counts for all),
 * and prints one JSON line per figure:
 *
 *   {bench, run, workload, peer, clients, eventsPerOp, eventsPerSec, p50Ms, p99Ms, serverCpuUsPerEvent,
 *    driverCpuPercent, errors, valid}
 *
 * At the end, one summary per run: a JSON line per workload, then a markdown table of events/s, Vellum's
 * ratio to each peer and each server's CPU per event (all its processes, from /proc). A figure is valid only
 * with 0 errors.
 *
 * Options: --quick (3 s windows, 200 read streams instead of 1000), --duration S (default 10), --warmup S
 * (default 2, 1 with --quick), --only NAME[,NAME] (workloads: append-1, append-100, read-stream-20,
 * read-global-20, read-global-100), --peers vellum,postgres,redis, --runs N (default 1), --dir PATH.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { print, removeRunDir, startRun } from "./benchSupport.js"
import { basicAuth, round } from "./httpPlan.js"
import { freePort, repoRoot, runForked, startVellum, type VellumNode } from "./httpProcesses.js"
import {
  SHARED_MEMORY_BYTES,
  GLOBAL_PAGE,
  parseOptions,
  runsOn,
  type DriverPlan,
  type DriverResult,
  type Peer,
  type PeerTarget
} from "./peersPlan.js"
import { postgresBinDir, postgresVersion, prefillPostgres, startPostgres } from "./peersPostgres.js"
import { prefillRedis, redisServerPath, redisVersion, startRedis } from "./peersRedis.js"
import { INSTALL_PEERS } from "./peersServers.js"
import { markdownTable, summarize, type Figure } from "./peersTable.js"
import { globalStarts, prefillVellum } from "./peersVellum.js"

const options = parseOptions(process.argv.slice(2))
const dataDir = path.resolve(repoRoot, options.dir)
const authorization = basicAuth("admin", "changeit")
const readEvents = options.readStreams * options.eventsPerReadStream
const PASSWORD_HASH_COST = 10

interface Running {
  readonly peer: Peer
  readonly pid: number
  readonly target: PeerTarget
  readonly version: string
}

/** What to stop at the end (or on SIGINT): every server started so far, latest first. */
const started: Array<() => Promise<void>> = []
let vellumNode: VellumNode | undefined

const commit = () => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
}

const startVellumPeer = async (dir: string, port: number): Promise<Running> => {
  fs.mkdirSync(dir, { recursive: true })
  // The same read memory as PostgreSQL's shared_buffers (peersPostgres.ts): 512 MiB of cached log blocks (the
  // node's default is 64 MiB; the reference's is 512 MiB). BENCH_VELLUM_CACHE_BYTES overrides it for A/B runs.
  const cacheBytes = process.env["BENCH_VELLUM_CACHE_BYTES"] ?? String(SHARED_MEMORY_BYTES)
  const node = await startVellum(port, [
    "--db",
    dir,
    "--password-hash-cost",
    String(PASSWORD_HASH_COST),
    "--chunks-cache-size",
    cacheBytes
  ])
  vellumNode = node
  started.push(async () => {
    await node.shutdown(authorization)
  })
  await prefillVellum(node.origin, authorization, options.readStreams, options.eventsPerReadStream)
  const starts = await globalStarts(node.origin, authorization, readEvents / GLOBAL_PAGE)
  const target = { peer: "vellum", origin: node.origin, authorization, globalStarts: starts } as const
  return { peer: "vellum", pid: node.pid!, target, version: `commit ${commit()}` }
}

const startPostgresPeer = async (binDir: string, dir: string, port: number): Promise<Running> => {
  const server = await startPostgres(binDir, dir, port)
  started.push(server.stop)
  await prefillPostgres(port, options.readStreams, options.eventsPerReadStream)
  const target = { peer: "postgres", port, globalPages: readEvents / GLOBAL_PAGE } as const
  return { peer: "postgres", pid: server.pid, target, version: await postgresVersion(port) }
}

const startRedisPeer = async (binary: string, dir: string, port: number): Promise<Running> => {
  const server = await startRedis(binary, dir, port)
  started.push(server.stop)
  await prefillRedis(port, options.readStreams, options.eventsPerReadStream)
  return { peer: "redis", pid: server.pid, target: { peer: "redis", port }, version: await redisVersion(port) }
}

/** Starts one server and writes the read data to it; undefined (and says so) when it is not installed. */
const startOne = async (peer: Peer): Promise<Running | undefined> => {
  const dir = path.join(dataDir, peer)
  const port = await freePort()
  const startedAt = Date.now()
  const postgresBin = postgresBinDir()
  const redisBinary = redisServerPath()
  let server: Running
  if (peer === "vellum") server = await startVellumPeer(dir, port)
  else if (peer === "postgres" && postgresBin !== undefined) server = await startPostgresPeer(postgresBin, dir, port)
  else if (peer === "redis" && redisBinary !== undefined) server = await startRedisPeer(redisBinary, dir, port)
  else {
    print({ bench: "skip", peer, reason: "not installed", install: INSTALL_PEERS })
    return undefined
  }
  print({
    bench: "start",
    peer,
    version: server.version,
    pid: server.pid,
    secs: round((Date.now() - startedAt) / 1000, 1)
  })
  return server
}

let stopping: Promise<void> | undefined
const stopAll = () =>
  (stopping ??= (async () => {
    for (const stop of started.splice(0).reverse()) await stop().catch(() => undefined)
    removeRunDir(dataDir)
  })())

const measure = async (server: Running, plan: DriverPlan, run: number): Promise<Figure> => {
  const result = await runForked<DriverPlan, DriverResult>("peersDriver.ts", plan, "the driver")
  print({
    bench: "peers",
    run,
    workload: plan.workload.name,
    peer: server.peer,
    clients: plan.workload.clients,
    eventsPerOp: plan.workload.events,
    eventsPerSec: Math.round(result.eventsPerSec),
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    serverCpuUsPerEvent: result.serverCpuUsPerEvent,
    driverCpuPercent: result.driverCpuPercent,
    errors: result.errors,
    valid: result.errors === 0,
    ...(result.firstError !== undefined ? { firstError: result.firstError } : {})
  })
  return {
    workload: plan.workload.name,
    peer: server.peer,
    eventsPerSec: result.eventsPerSec,
    errors: result.errors,
    ...(result.serverCpuUsPerEvent !== undefined ? { serverCpuUsPerEvent: result.serverCpuUsPerEvent } : {})
  }
}

const main = async () => {
  startRun(dataDir, {
    loadAverage: os.loadavg().map((l) => round(l, 2)),
    driver: "closed loop, one forked process per figure",
    durationSec: options.durationSec,
    warmupSec: options.warmupSec,
    runs: options.runs,
    readData: `${options.readStreams} streams x ${options.eventsPerReadStream} events`,
    dataDir: path.relative(repoRoot, dataDir)
  })
  const servers: Array<Running> = []
  for (const peer of options.peers) {
    const server = await startOne(peer)
    if (server !== undefined) servers.push(server)
  }
  const tables: Array<string> = []
  let valid = true
  for (let run = 1; run <= options.runs; run++) {
    const figures: Array<Figure> = []
    for (const workload of options.workloads) {
      for (const server of servers.filter((s) => runsOn(s.peer, workload))) {
        const figure = await measure(
          server,
          {
            target: server.target,
            workload,
            streamPrefix: `peers-r${run}-${workload.name}`,
            readStreams: options.readStreams,
            eventsPerReadStream: options.eventsPerReadStream,
            warmupSec: options.warmupSec,
            durationSec: options.durationSec,
            serverPid: server.pid
          },
          run
        )
        valid &&= figure.errors === 0
        figures.push(figure)
      }
    }
    const rows = summarize(options.workloads, figures)
    for (const row of rows) print({ bench: "peers-summary", run, ...row })
    tables.push(`run ${run} of ${options.runs}:\n\n${markdownTable(rows)}`)
  }
  console.log(`\n${tables.join("\n\n")}\n`)
  print({ bench: "done", valid, loadAverage: os.loadavg().map((l) => round(l, 2)) })
  return valid
}

const interrupted = (signal: NodeJS.Signals) => {
  console.error(`${signal}: stopping the servers`)
  void stopAll().finally(() => process.exit(130))
}
process.once("SIGINT", interrupted)
process.once("SIGTERM", interrupted)

main()
  .then(
    (valid) => {
      if (!valid) process.exitCode = 1
    },
    (e: unknown) => {
      console.error(e)
      if (vellumNode !== undefined) console.error(`node output (last lines):\n${vellumNode.outputTail()}`)
      process.exitCode = 1
    }
  )
  .finally(() => stopAll())
