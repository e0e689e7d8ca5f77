/**
 * The multi-node simulator's command line (cli.ts hands over when `--nodes` or `--cluster` is given):
 *
 * npm run sim -- --seed N --nodes 3     one seed with 3 voters; prints its trace hash and figures
 * npm run sim -- --seeds N --nodes 5    seeds 1..N (or --from A), 5 voters each
 * npm run sim -- --seeds N --cluster    seeds 1..N, the swarm picking 1, 3 or 5 voters per seed
 * npm run sim:soak -- --nodes 3         seeds from a random start until stopped
 * npm run sim:soak -- --nodes 3 --auto-scavenge   …each with the auto-scavenge workload and its faults
 * Options: --twice (every seed twice, trace hashes compared), --verbose (a line per seed), --no-coverage.
 * A failing seed prints the seed, the failure, the last trace lines and the replay command, and exits 1.
 */
import { Coverage } from "../coverage.js"
import { wallClockMillis } from "../live/wallClock.js"
import { runClusterSeed, type ClusterSeedResult } from "./runClusterSeed.js"
import type { VoterCount } from "./clusterOptions.js"

export const clusterCli = (args: ReadonlyArray<string>): void => {
  const value = (name: string): number | undefined => {
    const i = args.indexOf(name)
    return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : undefined
  }
  const nodesArg = value("--nodes")
  if (nodesArg !== undefined && nodesArg !== 1 && nodesArg !== 3 && nodesArg !== 5) {
    console.error(`--nodes must be 1, 3 or 5 (got ${nodesArg})`)
    process.exit(2)
  }
  const nodes = nodesArg as VoterCount | undefined
  const soak = args.includes("--soak")
  const twice = args.includes("--twice")
  const verbose = args.includes("--verbose")
  const autoScavenge = args.includes("--auto-scavenge") ? true : undefined
  const nodesFlag = `${nodes === undefined ? "--cluster" : `--nodes ${nodes}`}${autoScavenge ? " --auto-scavenge" : ""}`
  const runOptions = { ...(nodes === undefined ? {} : { nodes }), ...(autoScavenge ? { autoScavenge } : {}) }

  const report = (r: ClusterSeedResult) =>
    console.log(
      JSON.stringify({
        seed: r.seed,
        ok: r.ok,
        traceHash: r.traceHash,
        voters: r.options.voters,
        readOnlyReplica: r.options.readOnlyReplica,
        autoScavenge: r.options.autoScavenge ?? null,
        acknowledged: r.acknowledged,
        indeterminate: r.indeterminate,
        settled: r.settled,
        convergedInMs: r.convergedInMs ?? null,
        simMs: r.simMs,
        steps: r.steps
      })
    )

  const fail = (r: ClusterSeedResult, why: string) => {
    console.error(
      `\nSIMULATOR FAILURE  seed=${r.seed} (${r.options.voters} voters${r.options.readOnlyReplica ? " + a read-only replica" : ""})\n${why}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}\nreplay: npm run sim -- --seed ${r.seed} ${nodesFlag}`
    )
    process.exit(1)
  }

  const runOne = (seed: number): ClusterSeedResult => {
    const r = runClusterSeed(seed, runOptions)
    if (!r.ok) fail(r, r.failure ?? "failed")
    if (twice) {
      const again = runClusterSeed(seed, runOptions)
      if (again.traceHash !== r.traceHash) fail(r, `nondeterminism: trace hash ${r.traceHash} then ${again.traceHash}`)
    }
    return r
  }

  const single = value("--seed")
  if (single !== undefined) {
    report(runOne(single))
    return
  }
  const count = value("--seeds") ?? (soak ? Number.POSITIVE_INFINITY : 100)
  // The soak's starting seed is the one thing taken from the real clock; every seed it runs is printed.
  const from = value("--from") ?? (soak ? wallClockMillis() % 1_000_000_000 : 1)
  const started = wallClockMillis()
  const coverage = new Coverage()
  const totals = { passed: 0, acknowledged: 0, indeterminate: 0, simMs: 0 }
  for (let seed = from; seed < from + count; seed++) {
    const r = runOne(seed)
    Object.assign(totals, {
      passed: totals.passed + 1,
      acknowledged: totals.acknowledged + r.acknowledged,
      indeterminate: totals.indeterminate + r.indeterminate,
      simMs: totals.simMs + r.simMs
    })
    coverage.add(r.coverage)
    if (verbose) report(r)
    if (soak && totals.passed % 100 === 0) console.log(`${totals.passed} seeds passed (from ${from})`)
  }
  const { passed, acknowledged, indeterminate, simMs } = totals
  const wallMs = wallClockMillis() - started
  const batches = autoScavenge ? (["cluster", "autoScavenge"] as const) : (["cluster"] as const)
  if (!args.includes("--no-coverage"))
    console.log(`coverage (how often each rule ran):\n${batches.map((b) => coverage.report(b)).join("\n")}`)
  const missed = batches.flatMap((b) => coverage.missedByCi(b))
  if (missed.length > 0) console.log(`never ran: ${missed.join(", ")}`)
  console.log(
    `simulated ${(simMs / 1000).toFixed(1)} s in ${(wallMs / 1000).toFixed(1)} s of wall time (${(simMs / Math.max(1, wallMs)).toFixed(1)}x)`
  )
  console.log(
    `${passed} passed, 0 failed (${nodesFlag}): seeds ${from}..${from + passed - 1}, ${acknowledged} acknowledged appends checked, ${indeterminate} in doubt, ${(wallMs / 1000).toFixed(1)} s`
  )
}
