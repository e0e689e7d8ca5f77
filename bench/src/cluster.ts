/**
 * npm run bench:cluster — a 3-node cluster of real node processes on this machine (`node dist/main.mjs`, the
 * default cluster timings, as `npm run cluster` starts them), each figure printed beside its peer or ceiling
 * measured in the same run, one JSON line per figure:
 *
 * - `append-1`, `append-100`: single-event appends at 64 connections and 100-event appends at 16 (the load
 *   worker of bench:http), against the cluster's leader and against a single node running beside it, in
 *   turn, `--reps` times (default 3; the order swaps each rep). `ratio` = cluster ÷ single node requests/s,
 *   one line per rep, then `append-1-median` and `append-100-median`; target ≥ 0.5.
 * - `failover`: SIGKILL of the leader (under one client's appends) to the first append a survivor accepts,
 *   median of `--trials` (default 5); target ≤ 3 s. Its peer, `resignMedianMs`: the same after
 *   `POST /admin/node/resign` instead, as many trials: the hand-over without the detection. The detection's
 *   floor is the election timeout: a follower stands only after hearing nothing from its leader for 1 to 2
 *   election timeouts (`electionTimeoutMs` on the line).
 * - `catch-up`: a wiped follower rejoining a cluster whose log holds `--log-mib` (default 1024), in MiB/s
 *   of log written and flushed, against the disk's sequential write rate measured in the same run (the
 *   same number of bytes in 4 MiB writes, one fdatasync); target ≥ 0.5 ×.
 * - `simulator`: the multi-node simulator's speed in simulated seconds per wall second over `--sim-seeds`
 *   3-node seeds (default 20), beside the single-node simulator's over as many seeds (clusterSimulator.ts);
 *   target ≥ 100. Until the simulator has a multi-node runner (simulation/src/cluster/) the line says it is
 *   not measurable.
 *
 * Options: --quick (one rep of 3 s per append scenario, 1 s warm-up, a 64 MiB log, 3 trials, 5 seeds),
 * --duration S (default 5), --warmup S (default 2), --reps N, --trials N, --log-mib N, --event-bytes N (data
 * per fill event, default 1000), --sim-seeds N, --dir PATH (default ./.bench-data/cluster; removed at the end), --only
 * appends,failover,catch-up,simulator.
 * BENCH_NODE_FLAGS gives every node's V8 flags (e.g. "--cpu-prof --cpu-prof-dir=DIR": each node writes its
 * profile when it stops).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { commandLine, median, print, removeRunDir, sequentialWriteMiBPerSec } from "./benchSupport.js"
import { APPEND_SCENARIOS, comparison, measureAppends, type LoadTiming, type MeasuredLoad } from "./clusterAppends.js"
import { catchUpTrial } from "./clusterCatchUp.js"
import { failoverTrial, type FailoverTrial, type LeaderLoss } from "./clusterFailover.js"
import { hasClusterSimulator, simulatorBatch } from "./clusterSimulator.js"
import {
  PASSWORD_HASH_COST,
  planCluster,
  settledLeader,
  startAll,
  stopAll,
  type BenchCluster
} from "./clusterProcesses.js"
import { basicAuth, round } from "./httpPlan.js"
import { freePort, repoRoot, startVellum } from "./httpProcesses.js"

const { has, value: argValue } = commandLine()
const quick = has("--quick")
const numberArg = (name: string, fallback: number) => {
  const value = Number(argValue(name) ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} takes a positive number`)
  return value
}
const PARTS = ["appends", "failover", "catch-up", "simulator"] as const
type Part = (typeof PARTS)[number]
const only = argValue("--only")
  ?.split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "")
for (const name of only ?? []) {
  if (!(PARTS as ReadonlyArray<string>).includes(name))
    throw new Error(`unknown part ${name}; known: ${PARTS.join(", ")}`)
}
const runs = (part: Part) => only === undefined || only.includes(part)

const MiB = 1024 * 1024
const timing: LoadTiming = {
  durationSec: numberArg("--duration", quick ? 3 : 5),
  warmupSec: numberArg("--warmup", quick ? 1 : 2)
}
const reps = numberArg("--reps", quick ? 1 : 3)
const trials = numberArg("--trials", quick ? 3 : 5)
const logBytes = numberArg("--log-mib", quick ? 64 : 1024) * MiB
const eventBytes = numberArg("--event-bytes", 1000)
const dataDir = path.resolve(repoRoot, argValue("--dir") ?? ".bench-data/cluster")
/** The reference's default, which the nodes run with (LeaderElectionTimeoutMs). */
const ELECTION_TIMEOUT_MS = 1_000
const simSeeds = numberArg("--sim-seeds", quick ? 5 : 20)

const authorization = basicAuth("admin", "changeit")

const removeDataDir = () => removeRunDir(dataDir)

/**
 * Both append scenarios, `reps` times, on a single node of its own and on the cluster's leader in turn, the
 * order swapped at each rep so that a drift of the shared machine falls on both alike. One line per rep,
 * then the medians.
 */
const appends = async (cluster: BenchCluster) => {
  const single = await startVellum(await freePort(), [
    "--db",
    path.join(dataDir, "single"),
    "--password-hash-cost",
    String(PASSWORD_HASH_COST)
  ])
  let valid = true
  try {
    for (const scenario of APPEND_SCENARIOS) {
      const onSingle = () => measureAppends(scenario, single.origin, authorization, [single.pid], timing)
      const onCluster = async () => {
        const leader = await settledLeader(cluster, authorization)
        const followers = cluster.members.filter((m) => m !== leader)
        const pids = [leader, ...followers].map((m) => m.process?.pid)
        return measureAppends(scenario, leader.origin, authorization, pids, timing)
      }
      const lines: Array<ReturnType<typeof comparison>> = []
      for (let rep = 1; rep <= reps; rep++) {
        let singleRun: MeasuredLoad
        let clusterRun: MeasuredLoad
        if (rep % 2 === 1) {
          singleRun = await onSingle()
          clusterRun = await onCluster()
        } else {
          clusterRun = await onCluster()
          singleRun = await onSingle()
        }
        const line = comparison(scenario, singleRun, clusterRun)
        print({ ...line, rep })
        lines.push(line)
        valid &&= line.valid
      }
      const ratio = median(lines.map((line) => line.ratio))
      print({
        bench: `${scenario.bench}-median`,
        reps,
        ratio: round(ratio, 3),
        ratios: lines.map((line) => line.ratio),
        clusterReqPerSec: Math.round(median(lines.map((line) => line.clusterReqPerSec))),
        singleReqPerSec: Math.round(median(lines.map((line) => line.singleReqPerSec))),
        clusterEventsPerSec: Math.round(median(lines.map((line) => line.clusterEventsPerSec))),
        singleEventsPerSec: Math.round(median(lines.map((line) => line.singleEventsPerSec))),
        target: 0.5,
        met: lines.every((line) => line.valid) && ratio >= 0.5
      })
    }
  } finally {
    valid = (await single.shutdown(authorization)) && valid
  }
  return valid
}

/** `trials` trials of one way of losing the leader, a line each; their failover and election times. */
const failoverTrials = async (cluster: BenchCluster, loss: LeaderLoss) => {
  const done: Array<FailoverTrial> = []
  for (let trial = 1; trial <= trials; trial++) {
    const result = await failoverTrial(cluster, authorization, loss)
    done.push(result)
    print({
      bench: "failover-trial",
      trial,
      ...result,
      failoverMs: round(result.failoverMs, 1),
      electedMs: result.electedMs === undefined ? undefined : round(result.electedMs, 1),
      rejoinMs: round(result.rejoinMs, 1)
    })
  }
  const elected = done.flatMap((t) => (t.electedMs === undefined ? [] : [t.electedMs]))
  return {
    failover: done.map((t) => t.failoverMs),
    medianElectedMs: elected.length === 0 ? undefined : round(median(elected), 1)
  }
}

const failovers = async (cluster: BenchCluster) => {
  const killed = await failoverTrials(cluster, "kill")
  const resigned = await failoverTrials(cluster, "resign")
  const failoverMs = median(killed.failover)
  print({
    bench: "failover",
    trials,
    medianMs: round(failoverMs, 1),
    minMs: round(Math.min(...killed.failover), 1),
    maxMs: round(Math.max(...killed.failover), 1),
    medianElectedMs: killed.medianElectedMs,
    resignMedianMs: round(median(resigned.failover), 1),
    resignMedianElectedMs: resigned.medianElectedMs,
    electionTimeoutMs: ELECTION_TIMEOUT_MS,
    floorNote:
      "a follower stands after 1 to 2 election timeouts without its leader; a resigning leader hands over at once",
    target: 3000,
    met: failoverMs <= 3000
  })
}

const catchUp = async (cluster: BenchCluster) => {
  const leader = await settledLeader(cluster, authorization)
  const follower = cluster.members.find((m) => m !== leader)!
  let ceiling = 0
  const result = await catchUpTrial(
    cluster,
    leader,
    follower,
    authorization,
    logBytes,
    { eventBytes, eventsPerAppend: Math.max(1, Math.floor(900_000 / (eventBytes + 100))) },
    (fill) => {
      print({ bench: "catch-up-fill", ...fill, secs: round(fill.secs, 1), eventBytes })
      // The ceiling, measured with the cluster idle just before the catch-up, over as many bytes.
      ceiling = sequentialWriteMiBPerSec(dataDir, fill.logBytes)
      print({ bench: "ceiling", sequentialWriteMiBPerSec: round(ceiling, 1), bytes: fill.logBytes })
    }
  )
  const ratio = round(result.writtenMiBPerSec / ceiling, 3)
  print({
    bench: "catch-up",
    ...result,
    startSecs: round(result.startSecs, 2),
    writtenSecs: round(result.writtenSecs, 2),
    indexedSecs: round(result.indexedSecs, 2),
    writtenMiBPerSec: round(result.writtenMiBPerSec, 1),
    indexedMiBPerSec: round(result.indexedMiBPerSec, 1),
    firstBytesSecs: result.firstBytesSecs === undefined ? undefined : round(result.firstBytesSecs, 2),
    streamingMiBPerSec: result.streamingMiBPerSec === undefined ? undefined : round(result.streamingMiBPerSec, 1),
    sequentialWriteMiBPerSec: round(ceiling, 1),
    ratio,
    target: 0.5,
    met: ratio >= 0.5
  })
}

const simulator = async () => {
  if (!hasClusterSimulator()) {
    print({
      bench: "simulator",
      measurable: false,
      reason: "the simulator has no multi-node runner yet (simulation/src/cluster/ is missing)"
    })
    return
  }
  const cluster = await simulatorBatch(["--seeds", String(simSeeds), "--nodes", "3"])
  const single = await simulatorBatch(["--seeds", String(simSeeds)])
  print({
    bench: "simulator",
    seeds: simSeeds,
    clusterSimulatedPerWall: round(cluster.ratio, 1),
    singleNodeSimulatedPerWall: round(single.ratio, 1),
    ratio: single.ratio === 0 ? 0 : round(cluster.ratio / single.ratio, 3),
    cluster: { simulatedSecs: cluster.simulatedSecs, wallSecs: cluster.wallSecs },
    singleNode: { simulatedSecs: single.simulatedSecs, wallSecs: single.wallSecs },
    target: 100,
    met: cluster.ratio >= 100
  })
}

const main = async () => {
  fs.rmSync(dataDir, { recursive: true, force: true })
  fs.mkdirSync(dataDir, { recursive: true })
  print({
    bench: "setup",
    node: process.version,
    cpus: os.cpus().length,
    nodes: 3,
    loadGenerator: "undici, closed loop, one forked process per run",
    durationSec: timing.durationSec,
    warmupSec: timing.warmupSec,
    reps,
    trials,
    logMiB: logBytes / MiB,
    dataDir: path.relative(repoRoot, dataDir),
    passwordHashCost: PASSWORD_HASH_COST
  })
  const started = Date.now()
  const cluster = await planCluster(dataDir)
  let valid = true
  try {
    if (runs("appends") || runs("failover") || runs("catch-up")) {
      await startAll(cluster)
      if (runs("appends")) valid = (await appends(cluster)) && valid
      if (runs("failover")) await failovers(cluster)
      if (runs("catch-up")) await catchUp(cluster)
    }
    if (runs("simulator")) await simulator()
  } catch (e) {
    console.error(e instanceof Error ? e.message : e)
    for (const member of cluster.members) {
      if (member.process !== undefined)
        console.error(`${member.name} output (last lines):\n${member.process.outputTail()}`)
    }
    valid = false
  } finally {
    const stoppedCleanly = await stopAll(cluster, authorization)
    removeDataDir()
    print({ bench: "done", valid, nodesStoppedCleanly: stoppedCleanly, secs: round((Date.now() - started) / 1000, 1) })
  }
  if (!valid) process.exitCode = 1
}

main().catch((e) => {
  console.error(e)
  removeDataDir()
  process.exit(1)
})
