// Persistent subscriptions in the simulated cluster (the unmodified NodeApp on every member): groups run on the
// leader only; a follower passes group requests to it; when the leader is lost, the new leader loads the
// groups and resumes each from its last durable checkpoint, so what was acked and checkpointed is not
// delivered again, and what was not is.
import { Exit } from "effect"
import { describe, expect, it } from "vitest"
import { NoNetworkFaults, Prng } from "@vellum/platform"
import type { Reply } from "@vellum/http"
import { ClusterWorld } from "../src/cluster/clusterWorld.js"
import { chooseClusterOptions } from "../src/cluster/clusterOptions.js"

const Admin = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

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

    /** One request to a member's own handler, run on the simulated clock until it is answered. */
    const call = (name: string, method: string, url: string, headers: Record<string, string> = {}, body?: string) => {
      const member = cluster.member(name)
      const handler = cluster.open(name)!.handler
      const fiber = cluster.world.fork(
        name,
        handler({
          method,
          url,
          headers: { host: member.http, authorization: Admin, ...headers },
          body: body === undefined ? undefined : new TextEncoder().encode(body)
        })
      )
      cluster.world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 30_000 })
      const exit = fiber.unsafePoll()
      if (exit === null || !Exit.isSuccess(exit)) throw new Error(`${method} ${url} on ${name} was not answered`)
      const reply = (exit as Exit.Success<Reply, unknown>).value
      const text =
        reply.body === undefined
          ? ""
          : typeof reply.body === "string"
            ? reply.body
            : new TextDecoder().decode(reply.body as Uint8Array)
      return { status: reply.status, text }
    }
    /** Keeps asking until the answer has the status (a new leader loads its groups first). */
    const callUntil = (
      status: number,
      name: () => string,
      method: string,
      url: string,
      headers?: Record<string, string>,
      body?: string
    ) => {
      let last = { status: 0, text: "" }
      for (let i = 0; i < 60; i++) {
        const r = call(name(), method, url, headers, body)
        if (r.status === status) return r
        last = r
        cluster.world.run({ until: () => false, maxSimMs: 500 })
      }
      throw new Error(`${method} ${url} never answered ${status}: last ${last.status} ${last.text}`)
    }
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
