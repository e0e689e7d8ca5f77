// The election service on three simulated nodes, each with its own disk: a leader is elected; when the
// leader's node dies another is elected in a later term, and the dead node, restarted on what its disk
// kept, still holds its last promise; a resigning leader hands over at once.
import { Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { Disk, MemoryDisk, Prng, SimNetwork, SimWorld } from "@vellum/platform"
import { ElectionService, PromiseFile } from "../src/index.js"

const voters = ["n1", "n2", "n3"]
const address = (voter: string) => `${voter}:1112`

const cluster = (seed: number) => {
  const world = new SimWorld({ seed })
  const network = new SimNetwork({ clock: world.clock, prng: new Prng(seed).fork("net") })
  const disks = new Map(voters.map((v) => [v, new MemoryDisk({ prng: new Prng(seed).fork(`disk-${v}`) })]))
  const services = new Map<string, ElectionService.ElectionService>()
  const elected: Array<{ voter: string; term: number }> = []

  const start = (voter: string) => {
    world.fork(
      voter,
      Effect.scoped(
        Effect.gen(function* () {
          const scope = yield* Effect.scope
          const context = yield* Layer.buildWithScope(MemoryDisk.layer(disks.get(voter)!), scope)
          const promises = yield* Effect.provide(
            Effect.zipRight(
              Effect.ignore(Effect.flatMap(Disk, (d) => d.mkdir("/db"))),
              PromiseFile.openPromiseFile("/db")
            ),
            context
          )
          const service = yield* ElectionService.make(
            { self: voter, voters, electionTimeoutMillis: 1000, heartbeatMillis: 100 },
            network.service(address(voter)),
            promises,
            {
              tip: Effect.succeed({ epochNumber: 0, writerCheckpoint: 0 }),
              priorityRank: Effect.succeed(voters.indexOf(voter)),
              addressOf: address,
              onElected: (term) => Effect.sync(() => elected.push({ voter, term }))
            }
          )
          services.set(voter, service)
          yield* Effect.never
        })
      ).pipe(Effect.orDie)
    )
  }
  for (const v of voters) {
    disks.get(v)!.faulty = false
    start(v)
  }

  const view = (voter: string) => {
    const fiber = world.fork(voter, services.get(voter)!.view)
    world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 100 })
    const exit = fiber.unsafePoll()
    if (exit === null || !Exit.isSuccess(exit)) throw new Error(`no view from ${voter}`)
    return exit.value
  }
  const leaders = (among = voters) => among.map((v) => ({ v, ...view(v) })).filter((s) => s.role === "Leader")
  return { world, network, disks, services, elected, start, view, leaders }
}

describe("the election service on simulated nodes", () => {
  it("elects one leader, which the others follow", () => {
    for (const seed of [1, 2, 3]) {
      const c = cluster(seed)
      c.world.run({ maxSimMs: 10_000 })
      const leaders = c.leaders()
      expect(leaders, `seed ${seed}`).toHaveLength(1)
      for (const v of voters) expect(c.view(v).leader, `seed ${seed}: ${v}`).toBe(leaders[0]!.v)
    }
  })

  it("a dead leader is replaced in a later term; restarted on its disk, it kept its promise and follows", () => {
    const c = cluster(4)
    c.world.run({ maxSimMs: 10_000 })
    const [first] = c.leaders()
    const before = c.view(first!.v).term
    c.world.crash(first!.v)
    c.disks.get(first!.v)!.crash(new Prng(9), "strict")
    const others = voters.filter((v) => v !== first!.v)
    c.world.run({ maxSimMs: 10_000 })
    const [second] = c.leaders(others)
    expect(second).toBeDefined()
    expect(second!.term).toBeGreaterThan(before)
    c.world.restart(first!.v)
    const old = c.services.get(first!.v)
    c.start(first!.v)
    c.world.run({ until: () => c.services.get(first!.v) !== old, maxSimMs: 10 })
    // Before it hears from anyone: what its disk kept, at least the term it led.
    expect(c.view(first!.v).term).toBeGreaterThanOrEqual(before)
    c.world.run({ maxSimMs: 10_000 })
    expect(c.leaders().map((l) => l.v)).toEqual([second!.v])
    expect(c.view(first!.v).leader).toBe(second!.v)
    expect(new Set(c.elected.map((e) => e.term)).size).toBe(c.elected.length)
  })

  it("a leader that resigns hands over: another node leads within a second", () => {
    const c = cluster(5)
    c.world.run({ maxSimMs: 10_000 })
    const [first] = c.leaders()
    const fiber = c.world.fork(first!.v, c.services.get(first!.v)!.resign(voters.find((v) => v !== first!.v)))
    c.world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 100 })
    c.world.run({ maxSimMs: 1000 })
    const leaders = c.leaders()
    expect(leaders).toHaveLength(1)
    expect(leaders[0]!.v).not.toBe(first!.v)
  })
})
