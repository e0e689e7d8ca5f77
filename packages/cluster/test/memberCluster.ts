/**
 * Cluster members on simulated nodes joined by the simulated network, each over an in-memory log
 * (fakeReplicaLog.ts) and its own memory disk (the vote promise): start, run, and ask who leads.
 */
import { Effect, Exit } from "effect"
import { Disk, MemoryDisk, Prng, SimNetwork, SimWorld, type SimNetworkFaults } from "@vellum/platform"
import { ClusterNode, type ClusterSettings, type ClusterStatusService } from "../src/index.js"
import { FakeReplicaLog } from "./fakeReplicaLog.js"

export const names = ["n1", "n2", "n3"]
/** A read-only replica a cluster may have beside its voters. */
export const replicaName = "r1"
const internal = (n: string) => ({ host: n, port: 1112 })
export const address = (n: string) => `${n}:1112`

const settingsFor = (n: string): ClusterSettings => ({
  clusterSize: names.length,
  gossipSeeds: names.filter((m) => m !== n).map(address),
  readOnlyReplica: n === replicaName,
  internal: internal(n),
  httpAdvertised: { host: n, port: 2113 },
  nodePriority: 0,
  clusterSecret: "s",
  gossipIntervalMs: 2000,
  gossipTimeoutMs: 2500,
  deadMemberRemovalPeriodSec: 1800,
  leaderElectionTimeoutMs: 1000,
  commitTimeoutMs: 2000,
  heartbeatIntervalMs: 700,
  heartbeatTimeoutMs: 700,
  maxTruncationBytes: -1
})

export const cluster = (seed: number, faults?: SimNetworkFaults, withReplica = false) => {
  const nodes = withReplica ? [...names, replicaName] : names
  const world = new SimWorld({ seed })
  const network = new SimNetwork({
    clock: world.clock,
    prng: new Prng(seed).fork("net"),
    ...(faults !== undefined ? { faults } : {})
  })
  const logs = new Map(nodes.map((n) => [n, new FakeReplicaLog(n)]))
  const disks = new Map(nodes.map((n) => [n, new MemoryDisk({ prng: new Prng(seed).fork(`disk-${n}`) })]))
  const status = new Map<string, ClusterStatusService>()
  const start = (n: string) => {
    disks.get(n)!.faulty = false
    logs.get(n)!.restart()
    world.fork(
      n,
      Effect.scoped(
        Effect.gen(function* () {
          yield* Effect.ignore(Effect.flatMap(Disk, (d) => d.mkdir("/db")))
          const member = yield* ClusterNode.make(
            { settings: settingsFor(n), instanceId: `${n}-id`, version: "test", dataDir: "/db" },
            network.service(address(n)),
            logs.get(n)!
          )
          status.set(n, member)
          yield* Effect.never
        })
      ).pipe(Effect.provide(MemoryDisk.layer(disks.get(n)!)))
    )
  }
  for (const n of nodes) start(n)
  const run = <A, E>(n: string, effect: Effect.Effect<A, E>, maxSimMs = 10_000) => {
    const fiber = world.fork(n, effect)
    world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs })
    return fiber.unsafePoll()
  }
  const leaders = (among = names) => among.filter((n) => status.get(n)?.state() === "Leader")
  return { world, network, logs, status, start, run, leaders }
}

export const succeeded = <A, E>(exit: Exit.Exit<A, E> | null): boolean => exit !== null && Exit.isSuccess(exit)
