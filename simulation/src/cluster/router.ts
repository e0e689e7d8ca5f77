/**
 * A client's HTTP requests to a cluster, in-process: each request goes to one node (the client's choice),
 * runs on that node's scheduler and clock, and the client waits for it on its own clock for at most a hop
 * timeout. The client follows what the nodes tell it:
 *
 * - 307: the same request to the `Location`'s host:port (the leader's advertised HTTP endpoint), at most
 *   `maxHops` times in a row (a leader change under way can bounce a request between nodes);
 * - 503 (no leader known, or writes refused for now), a redirect loop, a 401 from a member that has not caught
 *   up with the default users yet, or a node that is down (a refused connection: nothing was sent): wait a
 *   little and try again from a random node, until the request's deadline; then a 503 stands (the caller
 *   counts a 5xx as indeterminate, as the single-node simulator does: conservative, never a false alarm);
 * - no answer within the hop timeout (the node crashed, paused or cannot commit): a 408 from the client
 *   itself — the request was cut off and its outcome is unknown, the only way a write becomes indeterminate
 *   here. The request may still run on the node later (a paused node resumes): `Trip.unfinished` says where.
 *
 * Each hop records the node and its committed position before and after it handled the request (read on
 * the node, in the same fiber): the checkers hold reads to the first, acknowledgements to the second.
 */
import { Duration, Effect, Fiber, type Exit } from "effect"
import type { HttpRequest, Reply } from "@vellum/http"
import type { Prng } from "@vellum/platform"
import type { NodeHandler } from "../httpStore.js"
import { replyHeader } from "../atomReplies.js"

/** A request handled by one node, with its committed positions around it. */
export interface Handled {
  readonly reply: Reply
  readonly committedBefore: number
  readonly committedAfter: number
}

/** A request in flight on a node: its fiber, and whether the incarnation it runs on is gone. */
export interface InFlight {
  readonly node: string
  readonly fiber: Fiber.RuntimeFiber<Handled>
  readonly dead: () => boolean
}

/** What the runner gives the router: who is at an address, and a way to send to a live node. */
export interface ClusterAccess {
  readonly nodes: ReadonlyArray<string>
  /** The node advertising this HTTP endpoint ("host:port"). */
  readonly nodeAt: (endpoint: string) => string | undefined
  /** Starts `request` on the node's scheduler; undefined when the node is down or not open yet. */
  readonly start: (node: string, request: HttpRequest) => InFlight | undefined
}

export interface RouterOptions {
  readonly maxHops: number
  readonly hopTimeoutMs: number
  /** How long a request keeps retrying 503s and redirect loops before its last answer stands. */
  readonly deadlineMs: number
}

export interface Hop {
  readonly node: string
  readonly status: number | "timeout" | "down"
  readonly committedBefore?: number
  readonly committedAfter?: number
}

/** One request's journey: its hops, and the request still running where the client stopped waiting. */
export class Trip {
  readonly hops: Array<Hop> = []
  unfinished: InFlight | undefined

  get last(): Hop | undefined {
    return this.hops[this.hops.length - 1]
  }

  count(status: number): number {
    return this.hops.filter((h) => h.status === status).length
  }
}

const reply = (status: number, reason: string): Reply => ({ status, reason, headers: {} })

/**
 * Answers tried again from another member: 503 (no leader known, or not taking writes yet), 307 past the hop
 * limit (a redirect loop while leadership moves), and 401: a fresh or restarted member that has not yet
 * committed the default users (they are written once, by the leader) refuses the admin until it catches up.
 */
const Retried: ReadonlySet<number> = new Set([503, 307, 401])

/** The host:port and the path of a redirect's Location. */
const locationOf = (r: Reply): { endpoint: string; path: string } | undefined => {
  const location = replyHeader(r, "location")
  if (location === undefined) return undefined
  try {
    const url = new URL(location)
    return { endpoint: url.host, path: url.pathname + url.search }
  } catch {
    return undefined
  }
}

/**
 * A `NodeHandler` for one operation: sends to `entry` first and follows the cluster's answers, recording
 * the journey in `trip`. A Location naming no node of the cluster is answered as it is (the caller's
 * checks fail on an unexpected 307).
 */
export const routed =
  (cluster: ClusterAccess, entry: string, trip: Trip, options: RouterOptions, prng: Prng): NodeHandler =>
  (request) =>
    Effect.gen(function* () {
      const started = yield* Effect.clockWith((c) => c.currentTimeMillis)
      let target = entry
      let current = request
      let hops = 0
      let last: Reply = reply(503, "Service Unavailable: no node answered")
      while (true) {
        const sent = yield* sendOnce(cluster, target, current, options.hopTimeoutMs)
        if (sent._tag === "Timeout") {
          trip.hops.push({ node: target, status: "timeout" })
          trip.unfinished = sent.inFlight
          return reply(408, "Request Timeout: no answer from the node (the client gave up)")
        }
        if (sent._tag === "Down") trip.hops.push({ node: target, status: "down" })
        else {
          const { reply: answer, committedBefore, committedAfter } = sent.handled
          trip.hops.push({ node: target, status: answer.status, committedBefore, committedAfter })
          last = answer
          if (answer.status === 307 && hops < options.maxHops) {
            const location = locationOf(answer)
            const next = location === undefined ? undefined : cluster.nodeAt(location.endpoint)
            if (location === undefined || next === undefined) return answer
            hops++
            target = next
            current = { ...current, url: location.path, headers: { ...current.headers, host: location.endpoint } }
            continue
          }
          if (!Retried.has(answer.status)) return answer
        }
        const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
        if (now - started >= options.deadlineMs) {
          return last.status === 503
            ? last
            : reply(503, `Service Unavailable: the client gave up after a ${last.status}`)
        }
        yield* Effect.sleep(Duration.millis(prng.int(20, 200)))
        target = prng.pick(cluster.nodes)
        current = request
        hops = 0
      }
    })

type Sent =
  | { readonly _tag: "Handled"; readonly handled: Handled }
  | { readonly _tag: "Down" }
  | { readonly _tag: "Timeout"; readonly inFlight: InFlight }

const sendOnce = (
  cluster: ClusterAccess,
  node: string,
  request: HttpRequest,
  timeoutMs: number
): Effect.Effect<Sent> => {
  const inFlight = cluster.start(node, request)
  if (inFlight === undefined) return Effect.succeed({ _tag: "Down" })
  return Effect.map(Effect.timeoutOption(Fiber.await(inFlight.fiber), Duration.millis(timeoutMs)), (exit): Sent => {
    if (exit._tag === "None") return { _tag: "Timeout", inFlight }
    const value: Exit.Exit<Handled> = exit.value
    // A handler never fails (defects become 500s); an interrupted one is a request cut off.
    return value._tag === "Success" ? { _tag: "Handled", handled: value.value } : { _tag: "Timeout", inFlight }
  })
}
