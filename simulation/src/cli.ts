/**
 * npm run sim -- --seed N        replay one seed; prints its trace hash and figures
 * npm run sim -- --seeds N       seeds 1..N (or --from A --seeds N: A..A+N-1)
 * npm run sim:soak               seeds from a random start until stopped (or --seeds N)
 * Options: --twice (run every seed twice and compare trace hashes), --verbose (a line per seed),
 * --direct (clients call the EventStore service instead of the node's HTTP app), --no-coverage (skip the
 * batch's coverage report).
 * A batch ends with its coverage report (how often each rule ran, coverage.ts) and its simulated time against
 * the wall time it took.
 * A failing seed prints the seed, the failure and the last trace lines, and exits 1.
 * With `--nodes 1|3|5` or `--cluster` (the swarm picks), the multi-node simulator runs instead (cluster/clusterCli.ts);
 * `--auto-scavenge` runs it with the auto-scavenge workload on every seed.
 * `--subscriptions` runs the persistent subscriptions workload (subscriptions/) on every seed (the swarm runs it
 * on a share of them); its coverage report follows. `--projections` likewise runs the projections workload
 * (projections/) on every seed.
 */
import { Coverage } from "./coverage.js"
import { runSeed, type SeedResult } from "./runSeed.js"
import { wallClockMillis } from "./live/wallClock.js"
import { clusterCli } from "./cluster/clusterCli.js"
import { preloadSandbox } from "@vellum/projections"

const args = process.argv.slice(2)
// Seeds run their simulated world without the event loop: QuickJS's module (user projections' sandbox) is
// loaded first, so sandboxes are then made synchronously.
await preloadSandbox()
if (args.includes("--nodes") || args.includes("--cluster") || args.includes("--auto-scavenge")) {
  clusterCli(args)
  process.exit(0)
}
const value = (name: string): number | undefined => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : undefined
}
const soak = args.includes("--soak")
const twice = args.includes("--twice")
const verbose = args.includes("--verbose")
const showCoverage = !args.includes("--no-coverage")
const transport = args.includes("--direct") ? "direct" : "http"
const single = value("--seed")
const subscriptions = args.includes("--subscriptions")
const projections = args.includes("--projections")
const runOptions = {
  transport,
  overrides: { ...(subscriptions ? { subscriptions: true } : {}), ...(projections ? { projections: true } : {}) }
} as const
const flags = `${transport === "direct" ? " --direct" : ""}${subscriptions ? " --subscriptions" : ""}${projections ? " --projections" : ""}`

const report = (r: SeedResult) =>
  console.log(
    JSON.stringify({
      seed: r.seed,
      ok: r.ok,
      traceHash: r.traceHash,
      crashes: r.crashes,
      acknowledged: r.acknowledged,
      indeterminate: r.indeterminate,
      healed: r.healed,
      settledInRun: r.settledInRun,
      scavenges: r.scavenges,
      steps: r.steps,
      simMs: r.simMs,
      chunkSize: r.options.chunkSize,
      memtable: r.options.memtableMaxEntries,
      weakHash: r.options.weakHash,
      clients: r.options.clients,
      faults: r.options.faults !== undefined,
      capacity: r.options.capacityBytes ?? null,
      subscriptionCopies: r.subscriptionCopies,
      projectionLinks: r.projectionLinks
    })
  )

const fail = (r: SeedResult, why: string) => {
  console.error(
    `\nSIMULATOR FAILURE  seed=${r.seed}\n${why}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}\nreplay: npm run sim -- --seed ${r.seed}${flags}`
  )
  process.exit(1)
}

const runOne = (seed: number): SeedResult => {
  const r = runSeed(seed, runOptions)
  if (!r.ok) fail(r, r.failure ?? "failed")
  if (twice) {
    const again = runSeed(seed, runOptions)
    if (again.traceHash !== r.traceHash) fail(r, `nondeterminism: trace hash ${r.traceHash} then ${again.traceHash}`)
  }
  return r
}

if (single !== undefined) {
  report(runOne(single))
} else {
  const count = value("--seeds") ?? (soak ? Number.POSITIVE_INFINITY : 100)
  // The soak's starting seed is the one thing taken from the real clock; every seed it runs is printed.
  const from = value("--from") ?? (soak ? wallClockMillis() % 1_000_000_000 : 1)
  const started = wallClockMillis()
  let passed = 0
  let crashes = 0
  let acknowledged = 0
  let indeterminate = 0
  let scavenges = 0
  let healed = 0
  let settledInRun = 0
  let simMs = 0
  const coverage = new Coverage()
  for (let seed = from; seed < from + count; seed++) {
    const r = runOne(seed)
    passed++
    crashes += r.crashes
    acknowledged += r.acknowledged
    indeterminate += r.indeterminate
    scavenges += r.scavenges
    healed += r.healed
    settledInRun += r.settledInRun
    simMs += r.simMs
    coverage.add(r.coverage)
    if (verbose) report(r)
    if (soak && passed % 100 === 0)
      console.log(`${passed} seeds passed (from ${from}), ${crashes} crashes, ${acknowledged} acknowledged operations`)
  }
  const wallMs = wallClockMillis() - started
  if (showCoverage) console.log(`coverage (how often each rule ran):\n${coverage.report()}`)
  if (showCoverage && subscriptions) console.log(`subscriptions coverage:\n${coverage.report("subscriptions")}`)
  if (showCoverage && projections) console.log(`projections coverage:\n${coverage.report("projections")}`)
  console.log(
    `simulated ${(simMs / 1000).toFixed(1)} s in ${(wallMs / 1000).toFixed(1)} s of wall time (${(simMs / Math.max(1, wallMs)).toFixed(1)}x)`
  )
  // The CI batch runs over HTTP; over the direct transport the HTTP-only families (users, ACLs) never run.
  const missed = [
    ...coverage.missedByCi(),
    ...(subscriptions ? coverage.missedByCi("subscriptions") : []),
    ...(projections ? coverage.missedByCi("projections") : [])
  ]
  if (missed.length > 0 && transport === "http") console.log(`never ran: ${missed.join(", ")}`)
  console.log(
    `${passed} passed, 0 failed (${transport}): seeds ${from}..${from + passed - 1}, ${crashes} crashes, ${acknowledged} acknowledged operations checked, ${indeterminate} indeterminate (${settledInRun} settled during the run), ${healed} disk-full periods healed without a restart, ${scavenges} scavenges started, ${(wallMs / 1000).toFixed(1)} s`
  )
}
