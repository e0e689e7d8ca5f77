// The live network over real sockets on localhost: requests, channels, and the proof of the cluster
// secret. Ports are fixed below the ephemeral range.
import { Effect, Either, Scope, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as NodeNetwork from "../src/live/NodeNetwork.js"
import type { NetworkHandlers } from "../src/Network.js"

const text = (s: string) => new TextEncoder().encode(s)
const decode = (b: Uint8Array) => new TextDecoder().decode(b)

const echo: NetworkHandlers = {
  onRequest: (from, message) => Effect.succeed(text(`${from} said ${decode(message)}`)),
  onChannel: (channel) =>
    Effect.forever(Effect.flatMap(channel.receive, (m) => channel.send(text(`echo ${decode(m)}`)))).pipe(
      Effect.catchAll(() => Effect.void)
    )
}

/** A node at 127.0.0.1:port serving `handlers`, for the scope's life. */
const node = (port: number, secret: string, handlers?: NetworkHandlers) =>
  Effect.gen(function* () {
    const network = yield* NodeNetwork.make({ self: `127.0.0.1:${port}`, clusterSecret: secret })
    if (handlers !== undefined) yield* network.serve(handlers)
    return network
  })

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

describe("NodeNetwork (live, TCP)", () => {
  it("answers requests from members, many at once over one connection, naming the sender", async () => {
    const replies = await run(
      Effect.gen(function* () {
        yield* node(23141, "s3cret", echo)
        const a = yield* node(23142, "s3cret")
        return yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => Effect.map(a.request("127.0.0.1:23141", text(`m${i}`), 5000), decode),
          { concurrency: "unbounded" }
        )
      })
    )
    expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => `127.0.0.1:23142 said m${i}`))
  })

  it("refuses a peer that does not know the cluster secret, both ways", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        yield* node(23143, "right", echo)
        const wrong = yield* node(23144, "wrong", echo)
        const right = yield* node(23145, "right")
        const asked = yield* Effect.either(wrong.request("127.0.0.1:23143", text("x"), 5000))
        const answered = yield* Effect.either(right.request("127.0.0.1:23144", text("x"), 5000))
        return { asked, answered }
      })
    )
    expect(Either.isLeft(outcome.asked) && outcome.asked.left._tag).toBe("NetworkUnreachable")
    expect(Either.isLeft(outcome.asked) && outcome.asked.left.message).toMatch(/secret/)
    expect(Either.isLeft(outcome.answered) && outcome.answered.left.message).toMatch(/secret/)
  })

  it("a request to a closed port is unreachable; one whose handler never answers times out", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        yield* node(23146, "s", { onRequest: () => Effect.never, onChannel: () => Effect.void })
        const a = yield* node(23147, "s")
        const closed = yield* Effect.either(a.request("127.0.0.1:23148", text("x"), 5000))
        const silent = yield* Effect.either(a.request("127.0.0.1:23146", text("x"), 200))
        return { closed, silent }
      })
    )
    expect(Either.isLeft(outcome.closed) && outcome.closed.left._tag).toBe("NetworkUnreachable")
    expect(Either.isLeft(outcome.silent) && outcome.silent.left._tag).toBe("NetworkTimedOut")
  })

  it("a channel carries messages in order both ways; closing the server ends it with NetworkClosed", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        const serverScope = yield* Scope.make()
        yield* Scope.extend(node(23149, "s", echo), serverScope)
        const a = yield* node(23150, "s")
        const channel = yield* a.open("127.0.0.1:23149", 5000)
        const big = "x".repeat(100_000)
        for (let i = 0; i < 200; i++) yield* channel.send(text(i === 100 ? big : String(i)))
        const got: Array<string> = []
        for (let i = 0; i < 200; i++) got.push(decode(yield* channel.receive))
        yield* Scope.close(serverScope, Exit.void)
        const after = yield* Effect.either(channel.receive)
        return { got, after, big }
      })
    )
    expect(outcome.got).toEqual(Array.from({ length: 200 }, (_, i) => `echo ${i === 100 ? outcome.big : i}`))
    expect(Either.isLeft(outcome.after) && outcome.after.left._tag).toBe("NetworkClosed")
  })

  it("reconnects after the peer restarts", async () => {
    const replies = await run(
      Effect.gen(function* () {
        const a = yield* node(23152, "s")
        const first = yield* Effect.scoped(
          Effect.flatMap(node(23151, "s", echo), () => a.request("127.0.0.1:23151", text("one"), 5000))
        )
        const between = yield* Effect.either(a.request("127.0.0.1:23151", text("gap"), 5000))
        const second = yield* Effect.scoped(
          Effect.flatMap(node(23151, "s", echo), () => a.request("127.0.0.1:23151", text("two"), 5000))
        )
        return [decode(first), Either.isLeft(between) ? between.left._tag : "answered", decode(second)]
      })
    )
    expect(replies).toEqual(["127.0.0.1:23152 said one", "NetworkUnreachable", "127.0.0.1:23152 said two"])
  })
})
