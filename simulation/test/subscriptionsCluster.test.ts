// Persistent subscriptions in the simulated cluster (the unmodified NodeApp on every member): groups run on the
// leader only; a follower passes group requests to it; when the leader is lost, the new leader loads the
// groups and resumes each from its last durable checkpoint, so what was acked and checkpointed is not
// delivered again, and what was not is.
import { describe, expect, it } from "vitest"
import { NoNetworkFaults, Prng } from "@vellum/platform"
import { ClusterWorld } from "../src/cluster/clusterWorld.js"
import { chooseClusterOptions } from "../src/cluster/clusterOptions.js"
import { callUntil as callUntilOf, memberCall } from "./clusterCalls.js"

interface Entry {
  readonly eventId: string
  readonly eventNumber: number
}

describe("persistent subscriptions in a simulated cluster", () => {
  it("run on the leader, are reached through a follower, and resume from the checkpoint after a failover", () => {
    const root = new Prng(7)
    const options = { ...chooseClusterOptions(root.fork("options"), 3, false), network: NoNetworkFaults }
    const cluster = new ClusterWorld(root.fork("cluster"), options, 0, (why) => {
      throw new Error(why)
    })
    const followers = () =>
      cluster.members.map((m) => m.name).filter((n) => cluster.open(n)?.status?.state() === "Follower")
    const settled = () => cluster.leaders().length === 1 && followers().length === 2
    cluster.world.run({ until: settled, maxSimMs: 60_000 })
    expect(settled()).toBe(true)

    const call = memberCall(cluster)
    const callUntil = (
      status: number,
      name: () => string,
      method: string,
      url: string,
      headers?: Record<string, string>,
      body?: string
    ) => callUntilOf(cluster, call, (r) => r.status === status, 60, name, method, url, headers, body)
    const pull = (name: () => string, count: number) => {
      const r = callUntil(200, name, "GET", `/subscriptions/jobs/workers/${count}?embed=body`, {
        accept: "application/vnd.eventstore.competingatom+json"
      })
      return (JSON.parse(r.text) as { entries: ReadonlyArray<Entry> }).entries.map((e) => e).reverse()
    }

    const leader = cluster.leaders()[0]!
    const follower = followers()[0]!
    // Created through a follower: passed to the leader, which runs the group.
    // (Until the default admin has reached the follower, it answers 401.)
    const created = callUntil(
      201,
      () => follower,
      "PUT",
      "/subscriptions/jobs/workers",
      { "content-type": "application/json" },
      JSON.stringify({ minCheckPointCount: 1, checkPointAfterMilliseconds: 100 })
    )
    expect(created.status).toBe(201)
    // One small event per write: the simulated members' chunks are tiny.
    for (let i = 0; i < 20; i++) {
      const event = {
        eventId: `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`,
        eventType: "job",
        data: {}
      }
      const appended = callUntil(
        201,
        () => leader,
        "POST",
        "/streams/jobs",
        { "content-type": "application/vnd.eventstore.events+json" },
        JSON.stringify([event])
      )
      expect(appended.status).toBe(201)
    }

    // Read and acked through the follower; checkpointed on the leader's clock.
    const first = pull(() => follower, 10)
    expect(first.map((e) => e.eventNumber)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    const acked = call(follower, "POST", `/subscriptions/jobs/workers/ack?ids=${first.map((e) => e.eventId).join(",")}`)
    expect(acked.status).toBe(202)
    // Handed out, never acked: they must come again after the failover.
    expect(pull(() => follower, 5).map((e) => e.eventNumber)).toEqual([10, 11, 12, 13, 14])
    cluster.world.run({ until: () => false, maxSimMs: 3_000 })

    // The leader is lost; another is elected and loads the group from its checkpoint.
    cluster.crash(leader, root.fork("crash"), "strict")
    cluster.world.run({ until: () => cluster.leaders().length === 1, maxSimMs: 60_000 })
    const newLeader = cluster.leaders()[0]!
    expect(newLeader).not.toBe(leader)
    const again = pull(() => newLeader, 10)
    expect(again.map((e) => e.eventNumber)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    cluster.dispose()
  })
})
