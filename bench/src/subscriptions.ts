/**
 * npm run bench:subscriptions — persistent subscriptions on the compiled node over real HTTP, against issue
 * 20's three targets, each beside a peer or a target measured in the same run:
 *
 *   1. `consumers-vs-page-reads`: a stream of E events (bench:http's, ~256 B each); 16 clients read its
 *      20-event pages with embed=body, and 16 competing consumers of a fresh group on it pull 20 messages
 *      with embed=body and ack each batch with one `ackAll` POST, in turn, R reps with the order swapped
 *      each rep (subscriptionsThroughput.ts). Events/s of both, their ratio (target ≥ 0.5; the median of the
 *      reps) and the server's CPU per event from /proc.
 *   2. `idle-group-memory`: on a node of its own, G idle groups on distinct streams, then G on one stream;
 *      heap used (after full collections) and RSS per group (target ≤ 1 MiB) (subscriptionsMemory.ts).
 *   3. `info-with-parked-messages`: a group whose parked stream holds P messages; `/info` median and max over
 *      20 calls (target < 100 ms) and the parked count it reports (subscriptionsParked.ts).
 *
 * The node runs as bench:http runs it (httpProcesses.ts: `dist/main.mjs` with `npm start`'s V8 flags, a free
 * port of 127.0.0.1, data under `.bench-data/subscriptions`, removed at the end; BENCH_NODE_FLAGS replaces
 * the flags, e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile it). The loads come from bench:http's forked
 * load worker (httpLoad.ts), one request (or feed + ack pair) in flight per connection.
 *
 * Options: --quick (3 s windows, R 1, E 120,000, G 100, P 20,000), --duration S (default 10), --warmup S
 * (default 2), --reps R (default 3), --events E (default 500,000), --groups G (default 1,000), --parked P
 * (default 1,000,000), --dir PATH, --only throughput,memory,parked.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { commandLine, print, removeRunDir } from "./benchSupport.js"
import { basicAuth, round } from "./httpPlan.js"
import { prefillStreams, readStreamName } from "./httpPrefill.js"
import { freePort, repoRoot, startVellum } from "./httpProcesses.js"
import { measureIdleGroups } from "./subscriptionsMemory.js"
import { measureParkedInfo } from "./subscriptionsParked.js"
import { CONSUMERS, measureThroughput } from "./subscriptionsThroughput.js"

const { has, value: argValue } = commandLine()
const quick = has("--quick")
const durationSec = Number(argValue("--duration") ?? (quick ? 3 : 10))
const warmupSec = Number(argValue("--warmup") ?? (quick ? 1 : 2))
const events = Number(argValue("--events") ?? (quick ? 120_000 : 500_000))
const groups = Number(argValue("--groups") ?? (quick ? 100 : 1_000))
const parked = Number(argValue("--parked") ?? (quick ? 20_000 : 1_000_000))
const reps = Number(argValue("--reps") ?? (quick ? 1 : 3))
const runDir = path.resolve(repoRoot, argValue("--dir") ?? ".bench-data/subscriptions")
const PARTS = ["throughput", "memory", "parked"] as const
const only = argValue("--only")
  ?.split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "")
const runs = (part: (typeof PARTS)[number]) => only === undefined || only.includes(part)

/** As bench:http: a cheap hash only shortens the first start (requests use the verified-credentials cache). */
const NODE_ARGS = ["--password-hash-cost", "10"]
const authorization = basicAuth("admin", "changeit")

const main = async () => {
  const unknown = only?.filter((name) => !(PARTS as ReadonlyArray<string>).includes(name)) ?? []
  if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(", ")}; known: ${PARTS.join(", ")}`)
  fs.rmSync(runDir, { recursive: true, force: true })
  fs.mkdirSync(runDir, { recursive: true })
  print({
    bench: "setup",
    node: process.version,
    cpus: os.cpus().length,
    loadGenerator: "undici, closed loop, one forked process per load",
    durationSec,
    warmupSec,
    events,
    reps,
    consumers: CONSUMERS,
    groups,
    parked,
    dataDir: path.relative(repoRoot, runDir)
  })
  const started = Date.now()
  let allValid = true
  if (runs("throughput") || runs("parked")) {
    const node = await startVellum(await freePort(), ["--db", path.join(runDir, "node"), ...NODE_ARGS])
    try {
      // Throughput needs the whole stream; the parked links need a few events to point at.
      const streamEvents = runs("throughput") ? events : 100
      await prefillStreams(node.origin, authorization, 1, streamEvents)
      print({ bench: "prefill", stream: readStreamName(0), events: streamEvents, secs: secsSince(started) })
      if (runs("throughput"))
        allValid = (await measureThroughput(node, { authorization, events, warmupSec, durationSec, reps })) && allValid
      if (runs("parked"))
        allValid =
          (await measureParkedInfo(node, { authorization, stream: readStreamName(0), streamEvents, parked })) &&
          allValid
    } catch (e) {
      console.error(e instanceof Error ? e.message : e)
      console.error(`node output (last lines):\n${node.outputTail()}`)
      allValid = false
    } finally {
      allValid = (await node.shutdown(authorization)) && allValid
    }
  }
  if (runs("memory"))
    allValid =
      (await measureIdleGroups({ authorization, dataDir: path.join(runDir, "idle"), nodeArgs: NODE_ARGS, groups })) &&
      allValid
  removeRunDir(runDir)
  print({ bench: "done", valid: allValid, secs: secsSince(started) })
  if (!allValid) process.exitCode = 1
}

const secsSince = (started: number) => round((Date.now() - started) / 1000, 1)

main().catch((e) => {
  console.error(e)
  removeRunDir(runDir)
  process.exit(1)
})
