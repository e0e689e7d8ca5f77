// Leader forwarding through the whole pipeline, over the simulated network: a follower that knows its leader
// passes a `forwardsToLeader` route's request to the leader, which answers it with its own pipeline, and relays
// the leader's reply byte for byte; a leader, a node that knows no leader and a request already forwarded are
// answered where they arrive; a forward that fails is the reference's 500; bad credentials never leave the node.
import { Effect, Exit, Layer, type Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { Prng, SimNetwork, SimWorld, type NetworkService } from "@vellum/platform"
import { Authenticator } from "@vellum/security"
import type { VNodeState } from "@vellum/cluster"
import {
  defaultHttpSettings,
  makeHandler,
  serveForwardedRequests,
  type HttpRequest,
  type LeaderForwarding,
  type Reply,
  type RouteDef
} from "../src/index.js"
import { decodeReply, decodeRequest, encodeReply, encodeRequest } from "../src/forwarding/messages.js"
import { ForwardMarginMillis } from "../src/forwarding/forwardToLeader.js"
import { BasicChallenge } from "../src/challenge.js"
import { AdminAuth, UserAuth, basic, header, testAuthenticator } from "./streams-harness.js"

const LeaderAddress = "10.0.0.2:1112"
const FollowerAddress = "10.0.0.1:1112"
const leaderEndpoint = { instanceId: "leader", httpHost: "10.0.0.2", httpPort: 2114 }

/** A body's bytes, as a Buffer whatever it came as (so that two compare by content). */
const bytes = (body: Reply["body"]): Buffer =>
  body === undefined ? Buffer.alloc(0) : typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body)
const text = (reply: Reply): string => new TextDecoder().decode(bytes(reply.body))

/** What a node's test routes saw of a request, as the body of their answer. */
interface Seen {
  readonly node: string
  readonly user: string
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string | null
  readonly baseUrl: string
}

const seen = (node: string, input: Parameters<RouteDef["handle"]>[0], method: string): Reply => {
  const body: Seen = {
    node,
    user: input.principal.name,
    method,
    url: input.requestUrl,
    headers: input.headers,
    body: input.body === undefined ? null : new TextDecoder().decode(input.body),
    baseUrl: input.baseUrl
  }
  return {
    status: 201,
    reason: `Made on ${node}`,
    headers: { "Content-Type": "application/json", Location: `${input.baseUrl}/things/${input.params["name"]}` },
    body: JSON.stringify(body)
  }
}

/** The test routes of node `node`: two passed to the leader, one answered where it arrives. */
const routes = (node: string): ReadonlyArray<RouteDef> => [
  {
    method: "POST",
    path: "/things/{name}",
    access: "authenticated",
    forwardsToLeader: true,
    requestCodecs: ["application/json"],
    responseCodecs: ["application/json"],
    handle: (input) => Effect.succeed(seen(node, input, "POST"))
  },
  {
    method: "GET",
    path: "/things/{name}",
    access: "handler",
    forwardsToLeader: true,
    responseCodecs: ["application/json"],
    handle: (input) => {
      // `?deny` answers the handler's own 401; `?waitMs=n` answers after n ms (a long poll's wait).
      if (input.query.get("deny") !== null) return Effect.succeed({ status: 401, headers: {}, body: "" })
      const wait = Number(input.query.get("waitMs") ?? "0")
      return Effect.as(Effect.sleep(wait), seen(node, input, "GET"))
    }
  },
  {
    method: "GET",
    path: "/local/{name}",
    access: "authenticated",
    responseCodecs: ["application/json"],
    handle: (input) => Effect.succeed(seen(node, input, "GET"))
  }
]

interface Node {
  readonly handle: (request: HttpRequest) => Effect.Effect<Reply>
  /** Requests that reached its handler over the internal channel. */
  readonly forwardedHere: Array<HttpRequest>
  /** The replies it sent back to them. */
  readonly repliesSent: Array<Reply>
}

const authentication = Layer.succeed(Authenticator, testAuthenticator())

const makeNode = (
  name: string,
  role: { state: VNodeState; leader?: typeof leaderEndpoint | undefined },
  forwarding: LeaderForwarding | undefined
): Node => {
  const handler = makeHandler(routes(name), {
    ...defaultHttpSettings,
    nodeRole: Effect.sync(() => ({ state: role.state, leader: role.leader })),
    ...(forwarding !== undefined ? { leaderForwarding: forwarding } : {})
  })
  const forwardedHere: Array<HttpRequest> = []
  const repliesSent: Array<Reply> = []
  const handle = (request: HttpRequest) => Effect.provide(handler(request), authentication)
  return {
    handle: (request) => {
      if (request.forwarded !== true) return handle(request)
      forwardedHere.push(request)
      return Effect.tap(handle(request), (reply) => void repliesSent.push(reply))
    },
    forwardedHere,
    repliesSent
  }
}

/** A follower of the leader at LeaderAddress (in `followerState`), and that leader, serving forwards. */
const cluster = (
  options: {
    readonly followerState?: VNodeState
    readonly leaderKnown?: boolean
    readonly leaderServes?: boolean
    readonly leaderState?: VNodeState
  } = {}
) => {
  const world = new SimWorld({ seed: 7 })
  const network = new SimNetwork({ clock: world.clock, prng: new Prng(7).fork("net") })
  const followerNet: NetworkService = network.service(FollowerAddress)
  const leaderNet: NetworkService = network.service(LeaderAddress)
  const known = options.leaderKnown ?? true
  const follower = makeNode(
    "follower",
    { state: options.followerState ?? "Follower", leader: known ? leaderEndpoint : undefined },
    { leaderAddress: () => (known ? LeaderAddress : undefined), network: followerNet }
  )
  // The leader follows the follower by its own account when `leaderState` says so: it must not send back.
  const leaderFollows = options.leaderState !== undefined && options.leaderState !== "Leader"
  const leader = makeNode(
    "leader",
    {
      state: options.leaderState ?? "Leader",
      leader: leaderFollows ? { instanceId: "f", httpHost: "10.0.0.1", httpPort: 2113 } : leaderEndpoint
    },
    { leaderAddress: () => (leaderFollows ? FollowerAddress : undefined), network: leaderNet }
  )
  if (options.leaderServes ?? true)
    world.fork("leader", Effect.scoped(Effect.zipRight(serveForwardedRequests(leaderNet, leader.handle), Effect.never)))
  world.run({ maxSimMs: 10 })

  /** Sends `request` to the follower and runs the world until it is answered. */
  const ask = (request: Partial<HttpRequest> & { url: string }, maxSimMs = 60_000): Reply => {
    const fiber: Fiber.RuntimeFiber<Reply> = world.fork(
      "follower",
      follower.handle({ method: "GET", headers: { Host: "10.0.0.1:2113" }, body: undefined, ...request })
    )
    world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs })
    const exit = fiber.unsafePoll()
    if (exit === null || !Exit.isSuccess(exit)) throw new Error(`no answer within ${maxSimMs} ms`)
    return exit.value
  }
  return { world, network, follower, leader, ask }
}

const seenIn = (reply: Reply): Seen => JSON.parse(text(reply)) as Seen

const post = {
  method: "POST",
  url: "/things/a%2Fb?x=1&y=%20",
  headers: {
    Host: "10.0.0.1:2113",
    Authorization: UserAuth,
    "Content-Type": "application/json",
    Accept: "application/json",
    "Accept-Encoding": "gzip",
    Connection: "keep-alive",
    "X-Custom": ["one", "two"]
  },
  body: new TextEncoder().encode('{"some":"body"}'),
  remote: "192.0.2.9:5000"
} as const

describe("a follower that knows its leader", () => {
  it("passes the request to the leader, which authenticates it again and answers it with its own pipeline", () => {
    const { ask, leader } = cluster()
    const reply = ask(post)
    expect(leader.forwardedHere).toHaveLength(1)
    const arrived = leader.forwardedHere[0]!
    expect(arrived.method).toBe("POST")
    expect(arrived.url).toBe("/things/a%2Fb?x=1&y=%20")
    expect(arrived.remote).toBe("192.0.2.9:5000")
    expect(arrived.scheme).toBe("http")
    // Relayed as it is: the leader's pipeline finished it (gzip included), the follower adds nothing.
    const sent = leader.repliesSent[0]!
    expect(reply.status).toBe(sent.status)
    expect(reply.reason).toBe("Made on leader")
    expect(reply.headers).toEqual(sent.headers)
    expect(bytes(reply.body)).toEqual(bytes(sent.body))
    expect(header(reply, "Content-Encoding")).toBe("gzip")
  })

  it("carries method, URL, headers (Authorization included) and body; Host names the leader", () => {
    const { ask } = cluster()
    const seenThere = seenIn(ask({ ...post, headers: { ...post.headers, "Accept-Encoding": "identity" } }))
    expect(seenThere.node).toBe("leader")
    expect(seenThere.user).toBe("user")
    expect(seenThere.method).toBe("POST")
    expect(seenThere.body).toBe('{"some":"body"}')
    expect(seenThere.headers["authorization"]).toBe(UserAuth)
    expect(seenThere.headers["x-custom"]).toBe("one, two")
    expect(seenThere.headers["content-type"]).toBe("application/json")
    expect(seenThere.headers["host"]).toBe("10.0.0.2:2114")
    expect(seenThere.headers["connection"]).toBeUndefined()
    expect(seenThere.url).toBe("http://10.0.0.2:2114/things/a%2Fb?x=1&y=%20")
  })

  it("names the node the client called in the answer's links (X-Forwarded-Host), unless the client sent one", () => {
    const { ask } = cluster()
    const plain = ask({ ...post, headers: { ...post.headers, "Accept-Encoding": "identity" } })
    expect(seenIn(plain).headers["x-forwarded-host"]).toBe("10.0.0.1:2113")
    expect(header(plain, "Location")).toBe("http://10.0.0.1:2113/things/a/b")
    const defaultPort = ask({ url: "/things/n", headers: { Host: "follower.example", Authorization: UserAuth } })
    expect(header(defaultPort, "Location")).toBe("http://follower.example/things/n")
    const proxied = ask({
      url: "/things/n",
      headers: { Host: "10.0.0.1:2113", "X-Forwarded-Host": "db.example.com:443", "X-Forwarded-Proto": "https" }
    })
    expect(seenIn(proxied).headers["x-forwarded-host"]).toBe("db.example.com:443")
    expect(header(proxied, "Location")).toBe("https://db.example.com/things/n")
  })

  it("passes on GETs without a body, in every state that follows a leader", () => {
    const following = [
      "Follower",
      "Clone",
      "CatchingUp",
      "PreReplica",
      "ReadOnlyReplica",
      "PreReadOnlyReplica"
    ] as const
    for (const followerState of following) {
      const { ask, leader } = cluster({ followerState })
      const reply = ask({ url: "/things/x", headers: { Host: "10.0.0.1:2113" } })
      expect(seenIn(reply).node, followerState).toBe("leader")
      expect(seenIn(reply).body).toBeNull()
      expect(leader.forwardedHere[0]!.body).toBeUndefined()
    }
  })

  it("relays the leader's 401 to an anonymous caller as it is (one challenge, not two)", () => {
    const { ask, leader } = cluster()
    const reply = ask({ url: "/things/x?deny", headers: { Host: "10.0.0.1:2113" } })
    expect(reply.status).toBe(401)
    expect(header(reply, "WWW-Authenticate")).toEqual(header(leader.repliesSent[0]!, "WWW-Authenticate"))
    expect(header(reply, "WWW-Authenticate")).toBe(
      `${BasicChallenge}, BasicCustom realm="Kurrent", BasicCustom realm="ES"`
    )
  })

  it("waits for a long poll's answer longer than the request deadline", () => {
    const { ask } = cluster()
    const wait = defaultHttpSettings.requestTimeoutMillis + 20_000
    const reply = ask({ url: `/things/x?waitMs=${wait}`, headers: { Host: "10.0.0.1:2113", "ES-LongPoll": "25" } })
    expect(reply.status).toBe(201)
    expect(seenIn(reply).node).toBe("leader")
  })
})

describe("what a follower answers itself", () => {
  it("routes that are not marked, and requests that fail authentication or first-level authorization", () => {
    const { ask, leader } = cluster()
    expect(seenIn(ask({ url: "/local/x", headers: { Host: "h", Authorization: UserAuth } })).node).toBe("follower")
    const bad = ask({ ...post, headers: { ...post.headers, Authorization: basic("user", "wrong") } })
    expect(bad.status).toBe(401)
    expect(header(bad, "WWW-Authenticate")).toBe('X-Basic realm="ESDB"')
    expect(ask({ ...post, headers: { ...post.headers, Authorization: "Basic !!!" } }).status).toBe(400)
    const anonymous = ask({ ...post, headers: { ...post.headers, Authorization: undefined } })
    expect(anonymous.status).toBe(401)
    expect(ask({ ...post, headers: { ...post.headers, "Content-Type": "image/png" } }).status).toBe(415)
    expect(leader.forwardedHere).toHaveLength(0)
  })

  it("when it leads, or knows no leader, or is between roles", () => {
    for (const options of [
      { followerState: "Leader" as const },
      { leaderKnown: false },
      { followerState: "PreLeader" as const },
      { followerState: "Unknown" as const },
      { followerState: "ShuttingDown" as const }
    ]) {
      const { ask, leader } = cluster(options)
      const reply = ask({ url: "/things/x", headers: { Host: "10.0.0.1:2113", Authorization: AdminAuth } })
      expect(seenIn(reply).node, JSON.stringify(options)).toBe("follower")
      expect(leader.forwardedHere).toHaveLength(0)
    }
  })

  it("a request another member forwarded, whatever its role: it is never passed on again", () => {
    const { ask, leader } = cluster()
    const direct = ask({ url: "/things/x", headers: { Host: "10.0.0.1:2113" }, forwarded: true })
    expect(seenIn(direct).node).toBe("follower")
    // Nor redirected: requires-leader routing does not apply to these routes.
    const requiresLeader = { Host: "10.0.0.1:2113", "ES-RequireLeader": "True" }
    expect(seenIn(ask({ url: "/things/x", headers: requiresLeader, forwarded: true })).node).toBe("follower")
    expect(leader.forwardedHere).toHaveLength(0)
    expect(seenIn(ask({ url: "/things/x", headers: requiresLeader })).node).toBe("leader")
    // Each takes the other for its leader: the request goes one way and is answered there.
    const crossed = cluster({ leaderState: "Follower" })
    expect(seenIn(crossed.ask({ url: "/things/x", headers: { Host: "10.0.0.1:2113" } })).node).toBe("leader")
    expect(crossed.leader.forwardedHere).toHaveLength(1)
    expect(crossed.follower.forwardedHere).toHaveLength(0)
  })
})

describe("a forward that fails", () => {
  const expectForwardFailed = (reply: Reply) => {
    expect(reply.status).toBe(500)
    expect(reply.reason).toBe("Error while forwarding request")
    expect(text(reply)).toBe("")
    expect(header(reply, "Content-Type")).toBeUndefined()
    expect(header(reply, "Access-Control-Allow-Origin")).toBe("*")
  }

  it("is a 500 when nothing answers at the leader's address", () => {
    const { ask } = cluster({ leaderServes: false })
    expectForwardFailed(ask({ url: "/things/x", headers: { Host: "10.0.0.1:2113" } }))
  })

  it("is a 500 once the leader has not answered within the request deadline and the margin", () => {
    const { ask, network, world } = cluster()
    network.isolate(LeaderAddress)
    const start = world.now
    expectForwardFailed(ask({ url: "/things/x", headers: { Host: "10.0.0.1:2113" } }))
    expect(world.now - start).toBeGreaterThanOrEqual(defaultHttpSettings.requestTimeoutMillis + ForwardMarginMillis)
  })
})

describe("the forwarding messages", () => {
  it("carry a request and a reply whole, bodies byte for byte, absent bodies absent", () => {
    const request = {
      method: "PUT",
      url: "/a?b",
      headers: { a: "1" },
      body: Uint8Array.of(0, 255, 10),
      scheme: "https" as const,
      remote: "r"
    }
    expect(decodeRequest(encodeRequest(request))).toEqual(request)
    expect(decodeRequest(encodeRequest({ ...request, body: undefined, remote: undefined }))?.body).toBeUndefined()
    const reply: Reply = { status: 204, reason: "No", headers: { A: ["x", "y"], B: "z" }, body: Uint8Array.of(1, 2) }
    expect(decodeReply(encodeReply(reply))).toEqual(reply)
    expect(decodeReply(encodeReply({ status: 200, headers: {} }))).toEqual({ status: 200, headers: {} })
    expect(bytes(decodeReply(encodeReply({ status: 200, headers: {}, body: "é" }))!.body)).toEqual(bytes("é"))
  })

  it("do not read from bytes that are not one", () => {
    const good = encodeRequest({
      method: "GET",
      url: "/",
      headers: {},
      body: undefined,
      scheme: "http",
      remote: undefined
    })
    for (const bad of [new Uint8Array(0), good.subarray(0, 6), Uint8Array.of(2, 0, 0, 0, 123, 125)]) {
      expect(decodeRequest(bad)).toBeUndefined()
      expect(decodeReply(bad)).toBeUndefined()
    }
    const noStatus = new TextEncoder().encode('{"headers":{}}')
    const framed = new Uint8Array(4 + noStatus.length)
    new DataView(framed.buffer).setUint32(0, noStatus.length, true)
    framed.set(noStatus, 4)
    expect(decodeReply(framed)).toBeUndefined()
  })
})
