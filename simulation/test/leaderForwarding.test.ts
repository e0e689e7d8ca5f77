// Leader forwarding as the simulated cluster's members are wired (the unmodified NodeApp, as the live node):
// a follower's forwarding reaches the leader it follows on the internal channel, and the leader answers a
// forwarded request with its own request handler (here `/info`, which says who answered).
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { NoNetworkFaults, Prng } from "@vellum/platform"
import { ForwardedMessages, leaderForwardingOf, type Reply } from "@vellum/http"
import { ClusterWorld } from "../src/cluster/clusterWorld.js"
import { chooseClusterOptions } from "../src/cluster/clusterOptions.js"

describe("leader forwarding between simulated cluster members", () => {
  it("a follower's forward reaches its leader, whose own handler answers it", () => {
    const root = new Prng(11)
    const options = { ...chooseClusterOptions(root.fork("options"), 3, false), network: NoNetworkFaults }
    const cluster = new ClusterWorld(root.fork("cluster"), options, 0, (why) => {
      throw new Error(why)
    })
    const followers = () =>
      cluster.members.map((m) => m.name).filter((n) => cluster.open(n)?.status?.state() === "Follower")
    cluster.world.run({ until: () => cluster.leaders().length === 1 && followers().length === 2, maxSimMs: 60_000 })
    expect(cluster.leaders()).toHaveLength(1)
    const leader = cluster.member(cluster.leaders()[0]!)
    const follower = followers()[0]!
    const status = cluster.open(follower)!.status!
    const forwarding = leaderForwardingOf(status)!
    expect(forwarding.leaderAddress()).toBe(leader.internal)

    const request = ForwardedMessages.encodeRequest({
      method: "GET",
      url: "/info",
      headers: { host: leader.http, accept: "application/json" },
      body: undefined,
      scheme: "http",
      remote: undefined
    })
    const fiber = cluster.world.fork(
      follower,
      Effect.map(forwarding.network.request(forwarding.leaderAddress()!, request, 5_000), ForwardedMessages.decodeReply)
    )
    cluster.world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 10_000 })
    const exit = fiber.unsafePoll()
    expect(exit !== null && Exit.isSuccess(exit)).toBe(true)
    const reply = (exit as Exit.Success<Reply | undefined, unknown>).value!
    expect(reply.status).toBe(200)
    const info = JSON.parse(new TextDecoder().decode(reply.body as Uint8Array)) as { state: string }
    expect(info.state).toBe("leader")
    cluster.dispose()
  })
})
