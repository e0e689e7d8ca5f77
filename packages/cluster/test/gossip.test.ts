// The gossip service over the simulated network: three nodes that know only one seed each converge on
// the whole cluster, a cut-off node is taken for dead by the others, and comes back alive once healed.
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { Prng, SimNetwork, SimWorld } from "@vellum/platform"
import { Gossip, type MemberInfo } from "../src/index.js"
import { member as memberFixture } from "./memberFixture.js"

/** A node that has just started: no log, no epoch, no leader. */
const member = (n: number): MemberInfo =>
  memberFixture(n, {
    timeStamp: 0,
    state: "Unknown",
    lastCommitPosition: 0,
    writerCheckpoint: 0,
    chaserCheckpoint: 0,
    epochPosition: -1,
    epochNumber: -1,
    epochId: "00000000-0000-0000-0000-000000000000"
  })

/** Three nodes; node i seeds with node i+1's address only. */
const cluster = (seed: number) => {
  const world = new SimWorld({ seed })
  const network = new SimNetwork({ clock: world.clock, prng: new Prng(seed).fork("net") })
  const services = new Map<string, Gossip.GossipService>()
  for (const n of [1, 2, 3]) {
    const name = `n${n}`
    const self = member(n)
    const next = member((n % 3) + 1)
    world.fork(
      name,
      Effect.scoped(
        Effect.gen(function* () {
          const report = Effect.map(
            Effect.clockWith((c) => c.currentTimeMillis),
            (now) => ({
              member: { ...self, timeStamp: now },
              state: "Unknown" as const,
              leaderInstanceId: undefined
            })
          )
          const gossip = yield* Gossip.make(
            Gossip.defaultGossipSettings([Gossip.internalAddress(next)]),
            network.service(Gossip.internalAddress(self)),
            report
          )
          services.set(name, gossip)
          yield* Effect.never
        })
      )
    )
  }
  /** What node `name` knows now: member IP → alive. */
  const view = (name: string): Record<string, boolean> => {
    const fiber = world.fork(name, services.get(name)!.members)
    world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 1000 })
    const exit = fiber.unsafePoll()!
    if (!Exit.isSuccess(exit)) throw new Error("no view")
    return Object.fromEntries(exit.value.map((m) => [m.internalTcpIp, m.isAlive]))
  }
  return { world, network, view }
}

const all = { "10.0.0.1": true, "10.0.0.2": true, "10.0.0.3": true }

describe("gossip over the simulated network", () => {
  it("nodes that know one seed each learn the whole cluster within the fast rounds", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { world, view } = cluster(seed)
      world.run({ maxSimMs: 2000 })
      for (const name of ["n1", "n2", "n3"]) expect(view(name), `seed ${seed}, ${name}`).toEqual(all)
    }
  })

  it("a node cut off is taken for dead by the others after a failed round, and alive again once healed", () => {
    const { world, network, view } = cluster(7)
    world.run({ maxSimMs: 3000 })
    network.isolate("10.0.0.3:1112")
    world.run({ maxSimMs: 20_000 })
    expect(view("n1")["10.0.0.3"]).toBe(false)
    expect(view("n2")["10.0.0.3"]).toBe(false)
    network.heal()
    world.run({ maxSimMs: 20_000 })
    for (const name of ["n1", "n2", "n3"]) expect(view(name), name).toEqual(all)
  })
})
