// The multi-node simulator's clients: a request follows 307s to the Location's node (same path), retries 503s
// and redirect loops from another node until its deadline, and a request with no answer within the hop timeout
// is cut off (a 408 from the client itself) with the request still running where it was left.
import { Effect, type Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { Prng, SimWorld } from "@vellum/platform"
import type { HttpRequest, Reply } from "@vellum/http"
import { routed, Trip, type ClusterAccess, type Handled, type RouterOptions } from "../src/cluster/router.js"

type Script = (node: string, request: HttpRequest, call: number) => Reply | "hang"

const options: RouterOptions = { maxHops: 3, hopTimeoutMs: 1_000, deadlineMs: 2_000 }

/** A world with a client node and nodes a, b, c whose replies follow `script`. */
const run = (script: Script, entry = "a", down: ReadonlyArray<string> = []) => {
  const world = new SimWorld({ seed: 1 })
  const nodes = ["a", "b", "c"]
  for (const n of ["client", ...nodes]) world.addNode(n)
  const seen: Array<{ node: string; url: string; host: unknown }> = []
  let calls = 0
  const access: ClusterAccess = {
    nodes,
    nodeAt: (endpoint) => nodes.find((n) => `${n}.sim:2113` === endpoint),
    start: (node, request) => {
      if (down.includes(node)) return undefined
      seen.push({ node, url: request.url, host: request.headers["host"] })
      const answer = script(node, request, calls++)
      const effect: Effect.Effect<Handled> =
        answer === "hang" ? Effect.never : Effect.succeed({ reply: answer, committedBefore: 10, committedAfter: 20 })
      const fiber: Fiber.RuntimeFiber<Handled> = world.fork(node, effect)
      return { node, fiber, dead: () => false }
    }
  }
  const trip = new Trip()
  const handler = routed(access, entry, trip, options, new Prng(7))
  const fiber = world.fork(
    "client",
    handler({ method: "POST", url: "/streams/s", headers: { host: "x" }, body: undefined })
  )
  world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 60_000 })
  const exit = fiber.unsafePoll()
  const leftRunning = trip.unfinished !== undefined && trip.unfinished.fiber.unsafePoll() === null
  world.dispose()
  if (exit === null || exit._tag !== "Success") throw new Error("the request did not finish")
  return { reply: exit.value, trip, seen, leftRunning }
}

const ok: Reply = { status: 201, headers: {} }
const redirect = (to: string): Reply => ({
  status: 307,
  headers: { location: `http://${to}.sim:2113/streams/s?from=redirect` }
})
const unavailable: Reply = { status: 503, reason: "Service Unavailable: no leader", headers: {} }

describe("cluster clients", () => {
  it("follow a 307 to the Location's node and path", () => {
    const { reply, trip, seen } = run((node) => (node === "a" ? redirect("b") : ok))
    expect(reply.status).toBe(201)
    expect(trip.hops.map((h) => `${h.node}:${h.status}`)).toEqual(["a:307", "b:201"])
    expect(seen[1]).toEqual({ node: "b", url: "/streams/s?from=redirect", host: "b.sim:2113" })
    expect(trip.last?.committedAfter).toBe(20)
  })

  it("retry a 503 after a pause, from some node, until an answer", () => {
    const { reply, trip } = run((_node, _r, call) => (call < 2 ? unavailable : ok))
    expect(reply.status).toBe(201)
    expect(trip.count(503)).toBe(2)
  })

  it("give up on a redirect loop or 503s at the deadline with a 503", () => {
    const loop = run((node) => (node === "a" ? redirect("b") : node === "b" ? redirect("a") : redirect("a")))
    expect(loop.reply.status).toBe(503)
    expect(loop.trip.count(307)).toBeGreaterThan(options.maxHops)
    const never = run(() => unavailable)
    expect(never.reply.status).toBe(503)
  })

  it("try another node when the chosen one is down", () => {
    const { reply, trip } = run(() => ok, "a", ["a"])
    expect(reply.status).toBe(201)
    expect(trip.hops[0]).toEqual({ node: "a", status: "down" })
  })

  it("cut off a request with no answer within the hop timeout: a 408, the request left running", () => {
    const { reply, trip, leftRunning } = run((node) => (node === "a" ? redirect("c") : "hang"))
    expect(reply.status).toBe(408)
    expect(trip.last?.status).toBe("timeout")
    expect(trip.unfinished?.node).toBe("c")
    expect(leftRunning).toBe(true)
  })
})
