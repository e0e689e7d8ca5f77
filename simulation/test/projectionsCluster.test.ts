// Projections in the simulated cluster (the unmodified NodeApp on every member): they run on the leader only; a
// follower passes projection requests to it; when the leader is lost, the new leader starts every enabled
// projection from its last checkpoint, and what it emits again is found already written: the emitted stream
// holds each output once.
import { beforeAll, describe, expect, it } from "vitest"
import { preloadSandbox } from "@vellum/projections"
import { NoNetworkFaults, Prng } from "@vellum/platform"
import { ClusterWorld } from "../src/cluster/clusterWorld.js"
import { chooseClusterOptions } from "../src/cluster/clusterOptions.js"
import { callUntil as callUntilOf, memberCall, type Answer } from "./clusterCalls.js"

const Events = { "content-type": "application/vnd.eventstore.events+json" }

const query = `fromStream('jobs').when({
  $init: () => ({ n: 0 }),
  job: (s, e) => { s.n++; emit('done', 'jobDone', { job: e.sequenceNumber }) }
})`

// The simulated world runs without the event loop: QuickJS's module is loaded before it starts.
beforeAll(() => preloadSandbox())

describe("projections in a simulated cluster", () => {
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
      check: (answer: Answer) => boolean,
      name: () => string,
      method: string,
      url: string,
      headers?: Record<string, string>,
      body?: string
    ) => callUntilOf(cluster, call, check, 120, name, method, url, headers, body)
    const status = (want: number) => (r: { status: number }) => r.status === want

    const leader = cluster.leaders()[0]!
    const follower = followers()[0]!
    // Created stopped through a follower, given a small checkpoint threshold, then enabled.
    callUntil(status(201), () => follower, "POST", "/projections/continuous?name=jobs&emit=yes&enabled=no", {}, query)
    callUntil(
      status(200),
      () => follower,
      "PUT",
      "/projection/jobs/config",
      { "content-type": "application/json" },
      JSON.stringify({
        emitEnabled: true,
        checkpointHandledThreshold: 5,
        checkpointUnhandledBytesThreshold: 10,
        pendingEventsThreshold: 5000,
        maxWriteBatchLength: 500
      })
    )
    callUntil(status(200), () => follower, "POST", "/projection/jobs/command/enable")
    // And a system projection beside it (created stopped).
    callUntil(status(200), () => follower, "POST", "/projection/$by_event_type/command/enable")
    const appendJobs = (from: number, to: number, on: () => string) => {
      for (let i = from; i < to; i++) {
        const event = {
          eventId: `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`,
          eventType: "job",
          data: {}
        }
        callUntil(status(201), on, "POST", "/streams/jobs", Events, JSON.stringify([event]))
      }
    }
    appendJobs(0, 20, () => leader)
    callUntil(
      (r) => r.text === '{"n":20}',
      () => follower,
      "GET",
      "/projection/jobs/state"
    )

    cluster.crash(leader, root.fork("crash"), "strict")
    cluster.world.run({ until: () => cluster.leaders().length === 1, maxSimMs: 60_000 })
    const newLeader = cluster.leaders()[0]!
    expect(newLeader).not.toBe(leader)
    appendJobs(20, 25, () => newLeader)
    callUntil(
      (r) => r.text === '{"n":25}',
      () => newLeader,
      "GET",
      "/projection/jobs/state"
    )
    // Every job's output once, in order, although events after the last checkpoint were processed again.
    const done = callUntil(status(200), () => newLeader, "GET", "/streams/done/0/forward/100?embed=body", {
      accept: "application/json"
    })
    // The feed is newest first.
    const jobs = (JSON.parse(done.text) as { entries: ReadonlyArray<{ data: string }> }).entries
      .map((e) => (JSON.parse(e.data) as { job: number }).job)
      .reverse()
    expect(jobs).toEqual(Array.from({ length: 25 }, (_, i) => i))
    // `$by_event_type` resumed too: one link per job event in `$et-job`, in order, none twice.
    const indexed = callUntil(
      (r) => r.status === 200 && (JSON.parse(r.text) as { entries: ReadonlyArray<unknown> }).entries.length === 25,
      () => newLeader,
      "GET",
      "/streams/$et-job/0/forward/100",
      { accept: "application/json" }
    )
    const targets = (JSON.parse(indexed.text) as { entries: ReadonlyArray<{ title: string }> }).entries
      .map((e) => e.title)
      .reverse()
    expect(targets).toEqual(Array.from({ length: 25 }, (_, i) => `${i}@jobs`))
    cluster.dispose()
  })
})
