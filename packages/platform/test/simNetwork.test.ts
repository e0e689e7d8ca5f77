import { Effect, Either, Exit, FiberRef, Scope } from "effect"
import { describe, expect, it } from "vitest"
import type { NetworkHandlers, NetworkService } from "../src/Network.js"
import { Prng } from "../src/Prng.js"
import { SimNetwork, type SimNetworkOptions } from "../src/sim/SimNetwork.js"
import { SimWorld } from "../src/sim/SimRuntime.js"

const text = (s: string) => new TextEncoder().encode(s)
const decode = (b: Uint8Array) => new TextDecoder().decode(b)

const makeWorld = (seed: number, options: Partial<SimNetworkOptions> = {}) => {
  const world = new SimWorld({ seed })
  const network = new SimNetwork({ clock: world.clock, prng: new Prng(seed).fork("network"), ...options })
  return { world, network }
}

/** Runs `effect` on `node` to its end and returns its exit. */
const runOn = <A, E>(world: SimWorld, node: string, effect: Effect.Effect<A, E>): Exit.Exit<A, E> => {
  const fiber = world.fork(node, effect)
  world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 120_000 })
  const exit = fiber.unsafePoll()
  if (exit === null) throw new Error("the effect did not finish")
  return exit
}

/** Starts a server on `node` that echoes requests (prefixed) and channel messages, forever. */
const serveEcho = (world: SimWorld, node: string, net: NetworkService, seen: Array<string> = []) => {
  const handlers: NetworkHandlers = {
    onRequest: (from, message) =>
      Effect.gen(function* () {
        const scheduler = yield* FiberRef.get(FiberRef.currentScheduler)
        seen.push(`${from}:${decode(message)}:${scheduler === world.node(node).scheduler ? "on-server" : "elsewhere"}`)
        return text(`echo ${decode(message)}`)
      }),
    onChannel: (channel) =>
      Effect.forever(Effect.flatMap(channel.receive, (m) => channel.send(text(`echo ${decode(m)}`)))).pipe(
        Effect.catchAll(() => Effect.void)
      )
  }
  world.fork(node, Effect.scoped(Effect.zipRight(net.serve(handlers), Effect.never)))
  world.run({ until: () => false, maxSimMs: 1 })
}

describe("SimNetwork requests", () => {
  it("a request reaches the server's handler on the server's own node, and the reply comes back after two trips", () => {
    const { world, network } = makeWorld(1, { latencyMs: { min: 4, max: 4 }, jitterMs: 0 })
    const seen: Array<string> = []
    serveEcho(world, "b", network.service("b:1112"), seen)
    const start = world.now
    const exit = runOn(world, "a", network.service("a:1112").request("b:1112", text("hi"), 1000))
    expect(Exit.isSuccess(exit) && decode(exit.value)).toBe("echo hi")
    expect(seen).toEqual(["a:1112:hi:on-server"])
    expect(world.now - start).toBe(8)
  })

  it("a request to an address nobody serves is refused; one to a crashed node times out", () => {
    const { world, network } = makeWorld(2)
    const a = network.service("a:1112")
    const nobody = runOn(world, "a", Effect.either(a.request("c:1112", text("x"), 1000)))
    expect(Exit.isSuccess(nobody) && Either.isLeft(nobody.value) && nobody.value.left._tag).toBe("NetworkUnreachable")
    serveEcho(world, "b", network.service("b:1112"))
    world.crash("b")
    const start = world.now
    const dead = runOn(world, "a", Effect.either(a.request("b:1112", text("x"), 700)))
    expect(Exit.isSuccess(dead) && Either.isLeft(dead.value) && dead.value.left._tag).toBe("NetworkTimedOut")
    expect(world.now - start).toBe(700)
  })

  it("a partition loses requests both ways (a one-way cut loses the replies too); healing restores them", () => {
    const { world, network } = makeWorld(3)
    serveEcho(world, "a", network.service("a:1112"))
    serveEcho(world, "b", network.service("b:1112"))
    const ask = (from: string, to: string) =>
      runOn(world, from, Effect.either(network.service(`${from}:1112`).request(`${to}:1112`, text("x"), 500)))
    const tag = (exit: Exit.Exit<Either.Either<Uint8Array, { _tag: string }>>) =>
      Exit.isSuccess(exit) ? (Either.isLeft(exit.value) ? exit.value.left._tag : "ok") : "died"
    network.partition("a:1112", "b:1112")
    expect([tag(ask("a", "b")), tag(ask("b", "a"))]).toEqual(["NetworkTimedOut", "NetworkTimedOut"])
    network.heal()
    network.partition("a:1112", "b:1112", true)
    expect([tag(ask("a", "b")), tag(ask("b", "a"))]).toEqual(["NetworkTimedOut", "NetworkTimedOut"])
    network.heal()
    network.isolate("b:1112")
    expect(tag(ask("a", "b"))).toBe("NetworkTimedOut")
    network.heal()
    expect([tag(ask("a", "b")), tag(ask("b", "a"))]).toEqual(["ok", "ok"])
  })

  it("injects loss and duplication as configured, and counts them", () => {
    const { world, network } = makeWorld(4, { faults: { lossChance: 0.3, duplicateChance: 0.3, breakChance: 0 } })
    const seen: Array<string> = []
    serveEcho(world, "b", network.service("b:1112"), seen)
    const a = network.service("a:1112")
    let answered = 0
    let timedOut = 0
    for (let i = 0; i < 200; i++) {
      const exit = runOn(world, "a", Effect.either(a.request("b:1112", text(`m${i}`), 200)))
      if (Exit.isSuccess(exit) && Either.isRight(exit.value)) answered++
      else timedOut++
    }
    expect(answered + timedOut).toBe(200)
    expect(network.stats.requestsLost).toBeGreaterThan(0)
    expect(network.stats.requestsDuplicated).toBeGreaterThan(0)
    expect(timedOut).toBeGreaterThan(0)
    // Every duplicate that was not lost ran the handler a second time.
    expect(seen.length).toBeGreaterThan(200 - network.stats.requestsLost)
    expect(new Set(seen).size).toBeLessThan(seen.length)
  })

  it("with jitter, requests on one link can overtake each other", () => {
    const { world, network } = makeWorld(5, { latencyMs: { min: 1, max: 1 }, jitterMs: 10 })
    const seen: Array<string> = []
    serveEcho(world, "b", network.service("b:1112"), seen)
    const a = network.service("a:1112")
    runOn(
      world,
      "a",
      Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => a.request("b:1112", text(String(i)), 1000),
        { concurrency: "unbounded" }
      )
    )
    const order = seen.map((s) => Number(s.split(":")[2]))
    expect([...order].sort((x, y) => x - y)).toEqual(order.map((_, i) => i))
    expect(order).not.toEqual([...order].sort((x, y) => x - y))
  })
})

/** Opens a channel from a to b's echo server, sends `count` messages and reads the echoes. */
const echoOverChannel = (world: SimWorld, network: SimNetwork, count: number, between?: () => void) =>
  runOn(
    world,
    "a",
    Effect.scoped(
      Effect.gen(function* () {
        const channel = yield* network.service("a:1112").open("b:1112", 1000)
        for (let i = 0; i < count; i++) yield* channel.send(text(String(i)))
        between?.()
        const got: Array<string> = []
        for (let i = 0; i < count; i++) got.push(decode(yield* channel.receive))
        return got
      })
    ).pipe(Effect.either)
  )

describe("SimNetwork channels", () => {
  it("delivers every message in order despite jitter, in both directions", () => {
    const { world, network } = makeWorld(6, { jitterMs: 20 })
    serveEcho(world, "b", network.service("b:1112"))
    const exit = echoOverChannel(world, network, 50)
    expect(Exit.isSuccess(exit) && Either.isRight(exit.value) && exit.value.right).toEqual(
      Array.from({ length: 50 }, (_, i) => `echo ${i}`)
    )
  })

  it("a close reaches the other end after what was sent before it", () => {
    const { world, network } = makeWorld(7)
    const received: Array<string> = []
    let ended = ""
    world.fork(
      "b",
      Effect.scoped(
        Effect.zipRight(
          network.service("b:1112").serve({
            onRequest: () => Effect.succeed(new Uint8Array()),
            onChannel: (channel) =>
              Effect.forever(Effect.map(channel.receive, (m) => received.push(decode(m)))).pipe(
                Effect.catchAll((e) => Effect.sync(() => (ended = e._tag)))
              )
          }),
          Effect.never
        )
      )
    )
    runOn(
      world,
      "a",
      Effect.scoped(
        Effect.gen(function* () {
          const channel = yield* network.service("a:1112").open("b:1112", 1000)
          yield* channel.send(text("one"))
          yield* channel.send(text("two"))
        })
      )
    )
    world.run({ maxSimMs: 1000 })
    expect(received).toEqual(["one", "two"])
    expect(ended).toBe("NetworkClosed")
  })

  it("holds messages across a short partition and delivers them, in order, once it heals", () => {
    const { world, network } = makeWorld(8)
    serveEcho(world, "b", network.service("b:1112"))
    const exit = echoOverChannel(world, network, 10, () => {
      network.partition("a:1112", "b:1112")
      world.fork(
        "a",
        Effect.zipRight(
          Effect.sleep(2000),
          Effect.sync(() => network.heal())
        )
      )
    })
    expect(Exit.isSuccess(exit) && Either.isRight(exit.value) && exit.value.right).toEqual(
      Array.from({ length: 10 }, (_, i) => `echo ${i}`)
    )
  })

  it("breaks both ends when a partition outlasts the give-up time, or the peer's node is dead", () => {
    const { world, network } = makeWorld(9, { channelGiveUpMs: 3000 })
    serveEcho(world, "b", network.service("b:1112"))
    const cut = echoOverChannel(world, network, 3, () => network.partition("a:1112", "b:1112"))
    expect(Exit.isSuccess(cut) && Either.isLeft(cut.value) && cut.value.left._tag).toBe("NetworkClosed")
    expect(network.stats.channelsBroken).toBe(1)
    network.heal()
    const start = world.now
    const dead = echoOverChannel(world, network, 3, () => world.crash("b"))
    expect(Exit.isSuccess(dead) && Either.isLeft(dead.value) && dead.value.left._tag).toBe("NetworkClosed")
    expect(world.now - start).toBeGreaterThanOrEqual(3000)
  })

  it("breaks channels at the configured chance; both ends then fail", () => {
    const { world, network } = makeWorld(10, { faults: { lossChance: 0, duplicateChance: 0, breakChance: 0.2 } })
    serveEcho(world, "b", network.service("b:1112"))
    const exit = echoOverChannel(world, network, 50)
    expect(Exit.isSuccess(exit) && Either.isLeft(exit.value) && exit.value.left._tag).toBe("NetworkClosed")
    expect(network.stats.channelsBroken).toBe(1)
  })

  it("the same seed replays the same deliveries and times", () => {
    const once = (seed: number) => {
      const { world, network } = makeWorld(seed, {
        jitterMs: 7,
        faults: { lossChance: 0.2, duplicateChance: 0.2, breakChance: 0 }
      })
      const seen: Array<string> = []
      serveEcho(world, "b", network.service("b:1112"), seen)
      const a = network.service("a:1112")
      const times: Array<number> = []
      for (let i = 0; i < 30; i++) {
        runOn(world, "a", Effect.either(a.request("b:1112", text(String(i)), 100)))
        times.push(world.now)
      }
      return JSON.stringify([seen, times])
    }
    expect(once(11)).toBe(once(11))
    expect(once(11)).not.toBe(once(12))
  })
})

describe("SimNetwork serving", () => {
  it("an address is served by one live node at a time; a restarted node serves it again", () => {
    const { world, network } = makeWorld(12)
    serveEcho(world, "b", network.service("b:1112"))
    const twice = runOn(
      world,
      "c",
      Effect.scoped(
        Effect.either(
          network.service("b:1112").serve({ onRequest: () => Effect.succeed(text("")), onChannel: () => Effect.void })
        )
      )
    )
    expect(Exit.isSuccess(twice) && Either.isLeft(twice.value)).toBe(true)
    world.restart("b")
    serveEcho(world, "b", network.service("b:1112"))
    const exit = runOn(world, "a", network.service("a:1112").request("b:1112", text("again"), 1000))
    expect(Exit.isSuccess(exit) && decode(exit.value)).toBe("echo again")
  })

  it("closing the server's scope stops serving: requests are then refused", () => {
    const { world, network } = makeWorld(13)
    const b = network.service("b:1112")
    runOn(
      world,
      "b",
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* Scope.extend(
          b.serve({ onRequest: () => Effect.succeed(text("ok")), onChannel: () => Effect.void }),
          scope
        )
        yield* Scope.close(scope, Exit.void)
      })
    )
    const exit = runOn(world, "a", Effect.either(network.service("a:1112").request("b:1112", text("x"), 1000)))
    expect(Exit.isSuccess(exit) && Either.isLeft(exit.value) && exit.value.left._tag).toBe("NetworkUnreachable")
  })
})
