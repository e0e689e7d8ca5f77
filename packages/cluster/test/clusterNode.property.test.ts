// Random faults against three cluster members over in-memory logs: crashes and restarts, partitions (one
// way and both), isolated nodes, message loss and duplication, and writes to whoever leads. Checked after
// every step (safety): any two nodes hold the same units up to the lower of their committed positions; no
// two nodes lead the same term. Then the faults stop (liveness): within 20 simulated seconds one node leads,
// a write succeeds, and every node's committed log holds every acknowledged write.
// VELLUM_CLUSTER_RUNS sets how many seeds (default 25).
import { describe, expect, it } from "vitest"
import { Prng } from "@vellum/platform"
import { address, cluster, names, succeeded } from "./memberCluster.js"

const runs = Number(process.env.VELLUM_CLUSTER_RUNS ?? 25)

const checkSafety = (c: ReturnType<typeof cluster>, leadersByTerm: Map<number, string>): string | undefined => {
  for (const a of names)
    for (const b of names) {
      if (a >= b) continue
      const la = c.logs.get(a)!
      const lb = c.logs.get(b)!
      const upTo = Math.min(la.committed(), lb.committed())
      const ua = la.units.filter((u) => u.end <= upTo).map((u) => JSON.stringify(u))
      const ub = lb.units.filter((u) => u.end <= upTo).map((u) => JSON.stringify(u))
      if (JSON.stringify(ua) !== JSON.stringify(ub)) return `${a} and ${b} differ below ${upTo}`
    }
  for (const n of names) {
    if (c.status.get(n)?.state() !== "Leader") continue
    const epoch = [...c.logs.get(n)!.units].reverse().find((u) => u.kind === "epoch")
    const term = epoch?.epochNumber ?? -1
    const known = leadersByTerm.get(term)
    if (known !== undefined && known !== n) return `${known} and ${n} both lead term ${term}`
    leadersByTerm.set(term, n)
  }
  return undefined
}

const runSeed = (seed: number): string | undefined => {
  const prng = new Prng(seed).fork("faults")
  const c = cluster(seed, { lossChance: 0.02, duplicateChance: 0.02, breakChance: 0.01 })
  const leadersByTerm = new Map<number, string>()
  const acked: Array<string> = []
  const down = new Set<string>()
  let writes = 0
  for (let step = 0; step < 40; step++) {
    const roll = prng.next()
    if (roll < 0.1 && down.size === 0) {
      const n = prng.pick(names)
      c.world.crash(n)
      down.add(n)
    } else if (roll < 0.2 && down.size > 0) {
      for (const n of down) {
        c.world.restart(n)
        c.start(n)
      }
      down.clear()
    } else if (roll < 0.3) {
      c.network.isolate(address(prng.pick(names)))
    } else if (roll < 0.4) {
      const [a, b] = [prng.pick(names), prng.pick(names)]
      if (a !== b) c.network.partition(address(a), address(b), prng.chance(0.5))
    } else if (roll < 0.55) {
      c.network.heal()
    } else {
      const leader = names.find((n) => !down.has(n) && c.status.get(n)?.state() === "Leader")
      if (leader !== undefined) {
        const payload = `w${writes++}`
        const exit = c.run(leader, c.logs.get(leader)!.append(payload), 2_500)
        if (succeeded(exit)) acked.push(payload)
      }
    }
    c.world.run({ maxSimMs: prng.int(100, 1_500) })
    const broken = checkSafety(c, leadersByTerm)
    if (broken !== undefined) return `step ${step}: ${broken}`
  }
  // Liveness: everything heals and comes back.
  c.network.heal()
  for (const n of down) {
    c.world.restart(n)
    c.start(n)
  }
  c.world.run({ maxSimMs: 20_000 })
  const leaders = c.leaders()
  if (leaders.length !== 1)
    return `after healing, ${leaders.length} leaders: ${names.map((n) => c.status.get(n)?.state())}`
  const exit = c.run(leaders[0]!, c.logs.get(leaders[0]!)!.append("final"), 5_000)
  if (!succeeded(exit)) return "after healing, a write did not succeed"
  c.world.run({ maxSimMs: 5_000 })
  for (const n of names) {
    const committed = new Set(c.logs.get(n)!.committedPayloads())
    const missing = [...acked, "final"].filter((p) => !committed.has(p))
    if (missing.length > 0) return `${n} lacks acknowledged ${missing.join(",")}`
  }
  return checkSafety(c, leadersByTerm)
}

describe("cluster members under random faults", () => {
  it(`stay safe throughout and converge once the faults stop (${runs} seeds)`, () => {
    const failures: Array<string> = []
    for (let seed = 1; seed <= runs; seed++) {
      const failure = runSeed(seed)
      if (failure !== undefined) failures.push(`seed ${seed}: ${failure}`)
    }
    expect(failures).toEqual([])
  })
})
