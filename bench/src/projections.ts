/**
 * npm run bench:projections — projections on the compiled node over real HTTP, against issue 21's four
 * targets, each beside a ceiling or a peer measured in the same run:
 *
 *   1. `keep-up`: `$by_category` and `$by_event_type` running while 16 clients append 100-event batches
 *      (`bench:http`'s appends); each projection's processing rate and its lag in events and in seconds of
 *      writes, beside the append rate of the same window and the append rate with every projection stopped
 *      (target: lag under one second of writes) (projectionsKeepUp.ts).
 *   2. `catch-up`: E events prefilled with every projection stopped; the node's own `$all` read rate over them
 *      (one client, 100-event pages), then `$by_category` enabled and timed to the end (target ≥ 200,000
 *      events/s), then a counting and a partitioned user projection created continuous over the same log,
 *      beside the counting handler alone in this process (target ≥ 50,000 events/s for the counting one)
 *      (projectionsCatchUp.ts).
 *   3. `memory`: on a node of its own, K idle continuous user projections; heap and RSS per projection
 *      (target ≤ 10 MiB) (projectionsMemory.ts).
 *
 * The node runs as bench:http runs it (httpProcesses.ts: `dist/main.mjs` with `npm start`'s V8 flags, a free
 * port of 127.0.0.1, data under `.bench-data/projections`, removed at the end; system projections created
 * stopped, as without `--start-standard-projections`; BENCH_NODE_FLAGS replaces the flags, e.g.
 * `--cpu-prof --cpu-prof-dir=DIR` to profile it).
 *
 * Options: --quick (3 s windows, E 100,000, K 20), --duration S (default 10), --warmup S (default 2),
 * --events E (default 1,000,000), --projections K (default 50), --dir PATH, --only keepup,catchup,memory.
 */
import * as path from "node:path"
import { commandLine, print, removeRunDir, selectedParts, startRun } from "./benchSupport.js"
import { basicAuth, round } from "./httpPlan.js"
import { freePort, repoRoot, startVellum } from "./httpProcesses.js"
import { measureCatchUp } from "./projectionsCatchUp.js"
import { measureKeepUp } from "./projectionsKeepUp.js"
import { measureIdleProjections } from "./projectionsMemory.js"

const { has, value: argValue } = commandLine()
const quick = has("--quick")
const durationSec = Number(argValue("--duration") ?? (quick ? 3 : 10))
const warmupSec = Number(argValue("--warmup") ?? (quick ? 1 : 2))
const events = Number(argValue("--events") ?? (quick ? 100_000 : 1_000_000))
const projections = Number(argValue("--projections") ?? (quick ? 20 : 50))
const runDir = path.resolve(repoRoot, argValue("--dir") ?? ".bench-data/projections")
const runs = selectedParts(argValue("--only"), ["keepup", "catchup", "memory"] as const)

/** As bench:http: a cheap hash only shortens the first start (requests use the verified-credentials cache). */
const NODE_ARGS = ["--password-hash-cost", "10"]
const authorization = basicAuth("admin", "changeit")

/** Runs `part` on a fresh node of its own under `runDir/{name}`; answers whether it was valid. */
const onNode = async (name: string, part: (node: Awaited<ReturnType<typeof startVellum>>) => Promise<boolean>) => {
  const node = await startVellum(await freePort(), ["--db", path.join(runDir, name), ...NODE_ARGS])
  let valid = false
  try {
    valid = await part(node)
  } catch (e) {
    console.error(e instanceof Error ? e.message : e)
    console.error(`node output (last lines):\n${node.outputTail()}`)
  } finally {
    valid = (await node.shutdown(authorization)) && valid
  }
  return valid
}

const main = async () => {
  startRun(runDir, {
    loadGenerator: "undici, closed loop, one forked process per load",
    durationSec,
    warmupSec,
    events,
    projections,
    dataDir: path.relative(repoRoot, runDir)
  })
  const started = Date.now()
  let allValid = true
  if (runs("keepup"))
    allValid =
      (await onNode("keep-up", (node) => measureKeepUp(node, { authorization, warmupSec, durationSec }))) && allValid
  if (runs("catchup"))
    allValid = (await onNode("catch-up", (node) => measureCatchUp(node, { authorization, events }))) && allValid
  if (runs("memory"))
    allValid =
      (await measureIdleProjections({
        authorization,
        dataDir: path.join(runDir, "idle"),
        nodeArgs: NODE_ARGS,
        projections
      })) && allValid
  removeRunDir(runDir)
  print({ bench: "done", valid: allValid, secs: round((Date.now() - started) / 1000, 1) })
  if (!allValid) process.exitCode = 1
}

main().catch((e) => {
  console.error(e)
  removeRunDir(runDir)
  process.exit(1)
})
