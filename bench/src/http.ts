/**
 * npm run bench:http — the Vellum node over real HTTP, against a bare node:http server measured in the
 * same run.
 *
 * Starts the node (`packages/node/src/main.ts`) as a child process on a free port with a fresh database on
 * the real disk (`.bench-data/http`), prefills the streams the read scenarios page through, captures one
 * reply per scenario and starts a bare node:http server (its own process too) that answers the same URLs
 * with those replies, byte for byte. Each scenario then loads the node and the bare server in turn, from a
 * separate load process (httpLoad.ts, undici, closed loop), and prints one JSON line:
 *
 *   {bench, connections, eventsPerRequest, vellumReqPerSec, vellumEventsPerSec, vellumP99Ms,
 *    bareReqPerSec, bareP99Ms, ratio, vellumErrors, vellumNon2xx, bareErrors, bareNon2xx,
 *    serverCpuUsPerRequest, serverSystemPercent, cpuRatio, valid}
 *
 * `ratio` = node req/s ÷ bare req/s: the share of node:http's own ceiling the node reaches. A run is valid
 * only with 0 errors and 0 non-2xx on both sides. On 2 cores the load generator caps the bare server (it
 * uses a whole core against it), so each side's CPU per request is also read from /proc over the measured
 * window (all threads; Linux only): `cpuRatio` = bare µs ÷ node µs per request, and `serverSystemPercent`
 * is the kernel's share of each. Scenarios: single-event appends at 64 connections,
 * 100-event appends at 16, 20-event stream pages with embed=body at 64, `$all` forward pages at 64.
 * Appends spread over 1000 streams with expected version -2 (any); every event has its own id.
 *
 * The node runs with --password-hash-cost 10: the default users are created at first start, and a cheap
 * hash keeps that start quick. Per request, authentication is a lookup in the node's verified-credentials
 * cache either way, so the hash cost is not what is measured.
 *
 * Options: --quick (3 s per scenario, smaller prefill), --duration S (default 10), --warmup S (default 2,
 * 1 with --quick; load not counted), --dir PATH (default ./.bench-data/http; removed at the end), --only
 * NAME[,NAME] (run only these scenarios, e.g. to profile one: BENCH_NODE_FLAGS="--cpu-prof" gives the node's
 * V8 flags, and the profile is written when it stops).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { commandLine, print, removeRunDir } from "./benchSupport.js"
import { ALL_PAGE_SIZE, ATOM_JSON, PAGE_SIZE, basicAuth, round, type LoadPlan, type LoadResult } from "./httpPlan.js"
import { allPagePaths, captureAppendReply, captureReadReply, prefillStreams, streamPagePaths } from "./httpPrefill.js"
import {
  freePort,
  repoRoot,
  runLoadProcess,
  startBare,
  startVellum,
  type BareServer,
  type VellumNode
} from "./httpProcesses.js"

const { has, value: argValue } = commandLine()
const quick = has("--quick")
const durationSec = Number(argValue("--duration") ?? (quick ? 3 : 10))
const warmupSec = Number(argValue("--warmup") ?? (quick ? 1 : 2))
const dataDir = path.resolve(repoRoot, argValue("--dir") ?? ".bench-data/http")
const only = argValue("--only")
  ?.split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "")
const readStreams = quick ? 50 : 200
const eventsPerReadStream = quick ? 200 : 500
const maxAllPages = quick ? 300 : 2000
const APPEND_STREAMS = 1000
const PASSWORD_HASH_COST = 10

const authorization = basicAuth("admin", "changeit")

const removeDataDir = () => removeRunDir(dataDir)

interface Scenario {
  readonly bench: string
  readonly connections: number
  readonly eventsPerRequest: number
  /** The plan against one server (the same for the node and the bare server, but for the origin). */
  readonly plan: (origin: string, serverPid: number | undefined) => LoadPlan
}

const scenarios = (streamPaths: ReadonlyArray<string>, allPaths: ReadonlyArray<string>): Array<Scenario> => {
  const base = (origin: string, serverPid: number | undefined, connections: number) => ({
    origin,
    authorization,
    connections,
    warmupSec,
    durationSec,
    ...(serverPid !== undefined ? { serverPid } : {})
  })
  const append = (eventsPerAppend: number, connections: number): Scenario => ({
    bench: `append-${eventsPerAppend}`,
    connections,
    eventsPerRequest: eventsPerAppend,
    plan: (origin, pid) => ({
      ...base(origin, pid, connections),
      kind: "append",
      eventsPerAppend,
      streamPrefix: `bench-append-${eventsPerAppend}`,
      streams: APPEND_STREAMS
    })
  })
  const read = (bench: string, paths: ReadonlyArray<string>, eventsPerRequest: number): Scenario => ({
    bench,
    connections: 64,
    eventsPerRequest,
    plan: (origin, pid) => ({ ...base(origin, pid, 64), kind: "read", paths, accept: ATOM_JSON })
  })
  return [
    append(1, 64),
    append(100, 16),
    read("read-stream-embed-body", streamPaths, PAGE_SIZE),
    read("read-all-forward-100", allPaths, ALL_PAGE_SIZE)
  ]
}

const problems = (r: LoadResult) =>
  r.errors > 0 || r.non2xx > 0 ? { statuses: r.statuses, firstError: r.firstError } : undefined

const runScenario = async (scenario: Scenario, node: VellumNode, bare: BareServer) => {
  const vellum = await runLoadProcess(scenario.plan(node.origin, node.pid))
  const ceiling = await runLoadProcess(scenario.plan(bare.origin, bare.pid))
  const valid = vellum.errors + vellum.non2xx + ceiling.errors + ceiling.non2xx === 0
  print({
    bench: scenario.bench,
    connections: scenario.connections,
    eventsPerRequest: scenario.eventsPerRequest,
    vellumReqPerSec: Math.round(vellum.reqPerSec),
    vellumEventsPerSec: Math.round(vellum.reqPerSec * scenario.eventsPerRequest),
    vellumP50Ms: vellum.p50Ms,
    vellumP99Ms: vellum.p99Ms,
    bareReqPerSec: Math.round(ceiling.reqPerSec),
    bareP99Ms: ceiling.p99Ms,
    ratio: ceiling.reqPerSec === 0 ? 0 : round(vellum.reqPerSec / ceiling.reqPerSec, 3),
    vellumErrors: vellum.errors,
    vellumNon2xx: vellum.non2xx,
    bareErrors: ceiling.errors,
    bareNon2xx: ceiling.non2xx,
    responseBytes: { vellum: vellum.meanResponseBytes, bare: ceiling.meanResponseBytes },
    loadCpuPercent: { vellum: vellum.loadCpuPercent, bare: ceiling.loadCpuPercent },
    serverCpuUsPerRequest: { vellum: vellum.serverCpuUsPerRequest, bare: ceiling.serverCpuUsPerRequest },
    serverSystemPercent: { vellum: vellum.serverSystemPercent, bare: ceiling.serverSystemPercent },
    cpuRatio:
      vellum.serverCpuUsPerRequest !== undefined &&
      ceiling.serverCpuUsPerRequest !== undefined &&
      vellum.serverCpuUsPerRequest > 0
        ? round(ceiling.serverCpuUsPerRequest / vellum.serverCpuUsPerRequest, 3)
        : undefined,
    valid,
    ...(problems(vellum) ? { vellumProblems: problems(vellum) } : {}),
    ...(problems(ceiling) ? { bareProblems: problems(ceiling) } : {})
  })
  return valid
}

const main = async () => {
  fs.rmSync(dataDir, { recursive: true, force: true })
  fs.mkdirSync(dataDir, { recursive: true })
  const port = await freePort()
  print({
    bench: "setup",
    node: process.version,
    cpus: os.cpus().length,
    loadGenerator: "undici, closed loop, one forked process per run",
    durationSec,
    warmupSec,
    dataDir: path.relative(repoRoot, dataDir),
    passwordHashCost: PASSWORD_HASH_COST,
    note: "per request, authentication is a verified-credentials cache lookup; the hash cost only shortens the first start"
  })
  const started = Date.now()
  const node = await startVellum(port, ["--db", dataDir, "--password-hash-cost", String(PASSWORD_HASH_COST)])
  let bare: BareServer | undefined
  let allValid = true
  try {
    await prefillStreams(node.origin, authorization, readStreams, eventsPerReadStream)
    const streamPaths = streamPagePaths(readStreams, eventsPerReadStream)
    const allPaths = await allPagePaths(node.origin, authorization, maxAllPages)
    if (allPaths.length === 0) throw new Error("no full page in $all after the prefill")
    print({
      bench: "prefill",
      streams: readStreams,
      eventsPerStream: eventsPerReadStream,
      streamPages: streamPaths.length,
      allPages: allPaths.length,
      secs: round((Date.now() - started) / 1000, 1)
    })
    bare = await startBare({
      append: await captureAppendReply(node.origin, authorization, "bench-append-1-0"),
      streamPage: await captureReadReply(node.origin, authorization, streamPaths[Math.floor(streamPaths.length / 2)]),
      allPage: await captureReadReply(node.origin, authorization, allPaths[allPaths.length - 1])
    })
    const all = scenarios(streamPaths, allPaths)
    const unknown = only?.filter((name) => !all.some((scenario) => scenario.bench === name)) ?? []
    if (unknown.length > 0)
      throw new Error(
        `unknown scenario ${unknown.join(", ")}; known: ${all.map((scenario) => scenario.bench).join(", ")}`
      )
    for (const scenario of all.filter((scenario) => only === undefined || only.includes(scenario.bench))) {
      allValid = (await runScenario(scenario, node, bare)) && allValid
    }
  } catch (e) {
    console.error(e instanceof Error ? e.message : e)
    console.error(`node output (last lines):\n${node.outputTail()}`)
    allValid = false
  } finally {
    await bare?.stop()
    const stoppedCleanly = await node.shutdown(authorization)
    removeDataDir()
    print({
      bench: "done",
      valid: allValid,
      nodeStoppedCleanly: stoppedCleanly,
      secs: round((Date.now() - started) / 1000, 1)
    })
  }
  if (!allValid) process.exitCode = 1
}

main().catch((e) => {
  console.error(e)
  removeDataDir()
  process.exit(1)
})
