// A follower far behind its leader is sent bigger slices (fewer to make durable one by one), and the usual
// ones once it is within a send window of the leader's log; it ends with the leader's log either way.
import { Effect, type Scope } from "effect"
import { describe, expect, it } from "vitest"
import { MemoryDisk, Prng, SimNetwork, SimWorld } from "@vellum/platform"
import { defaultStorageConfig, isRawChunk, make, type EventStoreService, type ReplicaLog } from "@vellum/storage"
import * as LeaderReplication from "../src/replication/LeaderReplication.js"
import { follow } from "../src/replication/FollowerReplication.js"

const config = {
  ...defaultStorageConfig("/db"),
  chunkSize: 256 * 1024,
  preallocateChunks: false,
  clustered: true,
  commitTimeoutMillis: 2_000
}
const timing = { heartbeatIntervalMs: 700, heartbeatTimeoutMs: 700 }
const window = { sendWindowBytes: 8_000, sliceBytes: 1_000, catchUpSliceBytes: 6_000 }

const event = (n: number) => ({
  eventId: `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`,
  eventType: "T",
  isJson: true,
  data: Buffer.alloc(200, 7),
  metadata: Buffer.alloc(0)
})

/** Runs `body` on node `name` with a clustered store on its own disk. */
const node = (
  world: SimWorld,
  name: string,
  body: (store: EventStoreService) => Effect.Effect<void, unknown, Scope.Scope>
) =>
  world.fork(
    name,
    Effect.scoped(Effect.flatMap(make(config), body)).pipe(
      Effect.provide(MemoryDisk.layer(new MemoryDisk({ prng: new Prng(3).fork(`disk-${name}`) })))
    )
  )

describe("replication to a follower far behind", () => {
  it("sends catch-up slices while it is more than a send window behind, and the usual ones after", () => {
    const world = new SimWorld({ seed: 3 })
    const network = new SimNetwork({ clock: world.clock, prng: new Prng(3).fork("net") })
    /** Each slice sent: how far behind the leader's log its follower was, and its size. */
    const slices: Array<{ behind: number; bytes: number }> = []
    let leader: EventStoreService | undefined
    let follower: EventStoreService | undefined
    node(world, "l", (store) =>
      Effect.gen(function* () {
        const replica = store.replica!
        const counting: ReplicaLog = {
          ...replica,
          readRaw: (from, maxBytes, chunkOffset) =>
            Effect.tap(replica.readRaw(from, maxBytes, chunkOffset), (read) => {
              if (read !== undefined && !isRawChunk(read))
                slices.push({ behind: replica.writerCheckpoint() - from, bytes: read.end - read.position })
            })
        }
        const replication = yield* LeaderReplication.make(
          { clusterSize: 1, ...timing, ...window },
          network.service("l:1112"),
          counting
        )
        yield* replica.lead(1, "00000000-0000-4000-8000-0000000000aa", replication.begin(1))
        for (let i = 0; i < 200; i++) yield* store.append("s", -2, [event(i)])
        leader = store
        yield* Effect.never
      })
    )
    world.run({ until: () => leader !== undefined, maxSimMs: 10_000 })
    node(world, "f", (store) => {
      follower = store
      const settings = { self: "f:1112", promotable: true, ...timing, maxTruncationBytes: -1, epochsSent: 20 }
      return Effect.scoped(follow(settings, network.service("f:1112"), store.replica!, "l:1112", () => {}))
    })
    world.run({
      until: () => follower?.replica?.writerCheckpoint() === leader!.replica!.writerCheckpoint(),
      maxSimMs: 10_000
    })
    expect(follower!.replica!.writerCheckpoint()).toBe(leader!.replica!.writerCheckpoint())
    const far = slices.filter((s) => s.behind > window.sendWindowBytes)
    const near = slices.filter((s) => s.behind <= window.sendWindowBytes)
    expect(far.length, "some slices went to the follower far behind").toBeGreaterThan(1)
    expect(near.length, "and some once it was close").toBeGreaterThan(1)
    // Events of ~280 framed bytes: a catch-up slice holds up to 6,000 bytes, a usual one up to 1,000.
    for (const s of far) expect(s.bytes).toBeGreaterThan(window.sliceBytes)
    for (const s of near) expect(s.bytes).toBeLessThanOrEqual(window.sliceBytes)
  })
})
