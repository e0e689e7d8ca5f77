// The leader's calls to a member's scavenger and a follower's commands to the leader, over a loopback
// network that hands each request to the serving side's handler: what is sent, and how each answer (or its
// absence) is read.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ClusterStatusService, MemberInfo } from "@vellum/cluster"
import { NetworkTimedOut, NetworkUnreachable, type NetworkService } from "@vellum/platform"
import {
  ScavengeAlreadyRunning,
  ScavengeNotFound,
  type ScavengerService,
  type StartScavengeOptions
} from "@vellum/scavenge"
import type { AutoScavengeReply } from "../src/AutoScavenge.js"
import { commandHandler, forwardToLeader } from "../src/service/forward.js"
import { decodeRequest } from "../src/service/messages.js"
import { LeaderRefusesStart, makeNodeScavengeCalls, nodeScavengeHandler } from "../src/service/nodeCalls.js"

const fakeScavenger = (options: { running?: string; last?: string; result?: "Unknown" | "InProgress" | "Success" }) => {
  const started: Array<StartScavengeOptions> = []
  const stopped: Array<string> = []
  const scavenger: ScavengerService = {
    start: (o) =>
      options.running !== undefined
        ? Effect.fail(new ScavengeAlreadyRunning({ scavengeId: options.running }))
        : Effect.sync(() => {
            started.push(o)
            return { scavengeId: "new-run" }
          }),
    current: Effect.succeed(
      options.running === undefined
        ? undefined
        : { scavengeId: options.running, progress: { phase: "ExecutingChunks", done: 2, total: 5 } }
    ),
    last: Effect.succeed({
      scavengeId: options.last ?? "00000000-0000-0000-0000-000000000000",
      result: options.result ?? "Unknown"
    }),
    checkpointStage: Effect.succeed(undefined),
    stop: (id) =>
      options.running !== undefined && (id === "current" || id === options.running)
        ? Effect.sync(() => {
            stopped.push(id)
            return { scavengeId: options.running! }
          })
        : Effect.fail(new ScavengeNotFound({ scavengeId: id })),
    mergeIndexes: Effect.succeed({ mergeIndexesId: "m" })
  }
  return { scavenger, started, stopped }
}

/** A network whose every request is answered by `serve` (or fails as `fail` says). */
const loopback = (serve: (bytes: Uint8Array) => Effect.Effect<Uint8Array>, fail?: "unreachable" | "timeout") => {
  const sentTo: Array<string> = []
  const network: NetworkService = {
    self: "self:1",
    request: (peer, message) => {
      sentTo.push(peer)
      if (fail === "unreachable") return Effect.fail(new NetworkUnreachable({ peer, message: "refused" }))
      if (fail === "timeout")
        return Effect.fail(new NetworkTimedOut({ peer, afterMillis: 5_000, message: "no answer" }))
      return serve(message)
    },
    open: () => Effect.die("not used"),
    serve: () => Effect.die("not used")
  }
  return { network, sentTo }
}

const nodeB = { address: "10.0.0.2", port: 2113 }
const scavengeServer =
  (scavenger: ScavengerService, self = nodeB, leads = false) =>
  (bytes: Uint8Array) =>
    nodeScavengeHandler(scavenger, Effect.succeed(self), () => leads)(decodeRequest(bytes)!)

const remote = { _tag: "Remote", node: nodeB, address: "node-b:1112" } as const

describe("the leader's calls to a member's scavenger", () => {
  it.effect("start asks for the reference's defaults (one thread, threshold 0, not sync-only) and returns the id", () =>
    Effect.gen(function* () {
      const node = fakeScavenger({})
      const { network, sentTo } = loopback(scavengeServer(node.scavenger))
      const calls = makeNodeScavengeCalls(fakeScavenger({}).scavenger, network)
      expect(yield* calls.start(remote)).toEqual({ _tag: "Started", scavengeId: "new-run" })
      expect(sentTo).toEqual(["node-b:1112"])
      expect(node.started).toEqual([
        { threads: 1, threshold: undefined, throttlePercent: 100, syncOnly: false, startFromChunk: 0 }
      ])
    })
  )

  it.effect("a start reaching a node that now leads is refused, and nothing starts there", () =>
    Effect.gen(function* () {
      const node = fakeScavenger({})
      const calls = makeNodeScavengeCalls(node.scavenger, loopback(scavengeServer(node.scavenger, nodeB, true)).network)
      expect(yield* calls.start(remote)).toEqual({ _tag: "Failed", message: LeaderRefusesStart })
      expect(node.started).toEqual([])
    })
  )

  it.effect("a start refused (already running) or unanswered is a failure, retried later", () =>
    Effect.gen(function* () {
      const busy = fakeScavenger({ running: "r1" })
      const refused = makeNodeScavengeCalls(busy.scavenger, loopback(scavengeServer(busy.scavenger)).network)
      expect(yield* refused.start(remote)).toEqual({ _tag: "Failed", message: "Scavenge is already running" })
      const lost = makeNodeScavengeCalls(busy.scavenger, loopback(scavengeServer(busy.scavenger), "timeout").network)
      expect((yield* lost.start(remote))._tag).toBe("Failed")
    })
  )

  it.effect("last reports the member's last run with the running one's progress, or Unreachable", () =>
    Effect.gen(function* () {
      const node = fakeScavenger({ running: "r1", last: "r1", result: "InProgress" })
      const calls = makeNodeScavengeCalls(node.scavenger, loopback(scavengeServer(node.scavenger)).network)
      expect(yield* calls.last(remote)).toEqual({
        _tag: "Answered",
        scavengeId: "r1",
        result: "InProgress",
        progress: { phase: "ExecutingChunks", done: 2, total: 5 }
      })
      const down = makeNodeScavengeCalls(
        node.scavenger,
        loopback(scavengeServer(node.scavenger), "unreachable").network
      )
      expect((yield* down.last(remote))._tag).toBe("Unreachable")
    })
  )

  it.effect("stop by id, or 'current' when no id is known; nothing to stop is NotFound", () =>
    Effect.gen(function* () {
      const node = fakeScavenger({ running: "r1" })
      const calls = makeNodeScavengeCalls(node.scavenger, loopback(scavengeServer(node.scavenger)).network)
      expect(yield* calls.stop(remote, "r1")).toBe("Stopped")
      expect(yield* calls.stop(remote, undefined)).toBe("Stopped")
      expect(node.stopped).toEqual(["r1", "current"])
      expect(yield* calls.stop(remote, "other")).toBe("NotFound")
      const idle = fakeScavenger({})
      const lost = makeNodeScavengeCalls(idle.scavenger, loopback(scavengeServer(idle.scavenger), "timeout").network)
      expect(yield* lost.stop(remote, "r1")).toHaveProperty("failed")
    })
  )

  it.effect("a node replaced at another endpoint (same internal address) takes no call meant for the old one", () =>
    Effect.gen(function* () {
      const replacement = fakeScavenger({})
      const server = scavengeServer(replacement.scavenger, { ...nodeB, port: 2114 })
      const calls = makeNodeScavengeCalls(fakeScavenger({}).scavenger, loopback(server).network)
      const started = yield* Effect.exit(calls.start(remote))
      expect(started._tag === "Failure" || (started._tag === "Success" && started.value._tag === "Failed")).toBe(true)
      expect(replacement.started).toEqual([])
    })
  )

  it.effect("the local scavenger is called directly (a single node scavenges itself)", () =>
    Effect.gen(function* () {
      const node = fakeScavenger({})
      const calls = makeNodeScavengeCalls(node.scavenger, undefined)
      expect(yield* calls.start({ _tag: "Local" })).toEqual({ _tag: "Started", scavengeId: "new-run" })
      expect(node.started).toHaveLength(1)
    })
  )
})

const member = (instanceId: string, port: number) =>
  ({ instanceId, internalHttpEndPointIp: "127.0.0.1", internalHttpEndPointPort: port }) as unknown as MemberInfo

const follower = (leader: string | undefined): ClusterStatusService =>
  ({
    clusterSize: 3,
    isReadOnlyReplica: false,
    state: () => "Follower",
    leader: () => (leader === undefined ? undefined : { instanceId: leader, httpHost: "127.0.0.1", httpPort: 2 }),
    members: () => Effect.succeed([member("a", 1), member("b", 2)]),
    internal: { protocol: () => undefined as never, addressOf: (m: MemberInfo) => `internal-of-${m.instanceId}` }
  }) as unknown as ClusterStatusService

const leaderAnswering = (reply: AutoScavengeReply) => commandHandler(() => Effect.succeed(reply))

describe("a follower's commands to the leader", () => {
  const self = Effect.succeed(member("a", 1))
  it.effect("configure, pause and resume the leader took are 202, whatever its own code", () =>
    Effect.gen(function* () {
      for (const reply of [{ _tag: "Done" }, { _tag: "Accepted" }] as const) {
        const { network, sentTo } = loopback(leaderAnswering(reply))
        expect(yield* forwardToLeader(follower("b"), network, self, { _tag: "Pause" })).toEqual({ _tag: "Accepted" })
        expect(sentTo).toEqual(["internal-of-b"])
      }
    })
  )

  it.effect("the leader's status document and refusals pass through; its failures are 500", () =>
    Effect.gen(function* () {
      const status: AutoScavengeReply = { _tag: "Status", body: { state: "Waiting", schedule: "* * * * *" } }
      const pass = (reply: AutoScavengeReply) =>
        forwardToLeader(follower("b"), loopback(leaderAnswering(reply)).network, self, { _tag: "GetStatus" })
      expect(yield* pass(status)).toEqual(status)
      expect(yield* pass({ _tag: "Rejected", message: "Auto scavenge process is currently pausing" })).toEqual({
        _tag: "Rejected",
        message: "Auto scavenge process is currently pausing"
      })
      expect(yield* pass({ _tag: "Failed", detail: "Not leader" })).toEqual({ _tag: "Failed", detail: "Not leader" })
    })
  )

  it.effect("no known leader, or no answer, is 500", () =>
    Effect.gen(function* () {
      const ok = loopback(leaderAnswering({ _tag: "Done" }))
      expect(yield* forwardToLeader(follower(undefined), ok.network, self, { _tag: "Resume" })).toEqual({
        _tag: "Failed",
        detail: "No leader node was found in the cluster"
      })
      const lost = loopback(leaderAnswering({ _tag: "Done" }), "timeout")
      expect((yield* forwardToLeader(follower("b"), lost.network, self, { _tag: "Resume" }))._tag).toBe("Failed")
      expect(ok.sentTo).toEqual([])
    })
  )

  it.effect("the leader runs the command it was passed, with its schedule", () =>
    Effect.gen(function* () {
      const seen: Array<unknown> = []
      const handler = commandHandler((command) => Effect.sync(() => (seen.push(command), { _tag: "Done" as const })))
      const { network } = loopback(handler)
      yield* forwardToLeader(follower("b"), network, self, { _tag: "Configure", schedule: "0 6 * * 6" })
      expect(seen).toEqual([{ _tag: "Configure", schedule: "0 6 * * 6" }])
    })
  )
})
