// Replication of a scavenged chunk between two real clustered stores over the simulated network: the
// leader (LeaderReplication) has merged and scavenged its first chunks before the follower (follow) joins,
// so the follower's position lies in a scavenged file; it is sent whole in RawChunk pieces, installed, and
// the rest follows as slices, leaving the follower with the leader's file byte for byte and its records.
// While a file is sent, its unacknowledged bytes count against the send window.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { MemoryDisk, Prng, SimNetwork, SimWorld } from "@vellum/platform"
import {
  defaultStorageConfig,
  isRawChunk,
  make,
  type EventStoreService,
  type ProposedEvent,
  type ReplicaLog
} from "@vellum/storage"
import * as LeaderReplication from "../src/replication/LeaderReplication.js"
import { follow } from "../src/replication/FollowerReplication.js"

const config = {
  ...defaultStorageConfig("/db"),
  chunkSize: 4096,
  memtableMaxEntries: 8,
  preallocateChunks: false,
  clustered: true,
  commitTimeoutMillis: 2_000
}

const event = (n: number): ProposedEvent => ({
  eventId: `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`,
  eventType: "T",
  isJson: true,
  data: Buffer.from(JSON.stringify({ n })),
  metadata: Buffer.alloc(0)
})

const timing = { heartbeatIntervalMs: 700 }

/** Positions and ids of every event of `$all`. */
const allEvents = (store: EventStoreService) =>
  Effect.gen(function* () {
    const out: Array<string> = []
    for (let position = 0; ;) {
      const page = yield* store.readAllForward(position, 4096)
      for (const e of page.events) out.push(`${e.event!.logPosition}:${e.event!.stream}:${e.event!.eventId}`)
      if (page.isEnd) return out
      position = page.nextPosition
    }
  })

/**
 * A world with a leader store that has written ~5 chunks, merged chunks 0..1 dropping the events of
 * "dropped", and written some more; its replication serves with the given window and piece size.
 */
const leaderWorld = (window: { sendWindowBytes: number; sliceBytes: number }, wrap: (r: ReplicaLog) => ReplicaLog) => {
  const world = new SimWorld({ seed: 5 })
  const network = new SimNetwork({ clock: world.clock, prng: new Prng(5).fork("net") })
  let leader: EventStoreService | undefined
  world.fork(
    "l",
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* make(config)
        const replication = yield* LeaderReplication.make(
          { clusterSize: 1, ...timing, ...window },
          network.service("l:1112"),
          wrap(store.replica!)
        )
        yield* store.replica!.lead(1, "00000000-0000-4000-8000-0000000000aa", replication.begin())
        for (let i = 0; store.replica!.writerCheckpoint() < 4 * config.chunkSize; i++)
          yield* store.append(i % 2 === 0 ? "kept" : "dropped", -2, [event(2 * i), event(2 * i + 1)])
        yield* store.engine.log.replaceChunks(0, 1, (record) => record.stream !== "dropped")
        yield* store.append("after", -2, [event(100_000)])
        leader = store
        yield* Effect.never
      })
    ).pipe(Effect.provide(MemoryDisk.layer(new MemoryDisk({ prng: new Prng(5).fork("disk-l") }))))
  )
  world.run({ until: () => leader !== undefined, maxSimMs: 10_000 })
  expect(leader, "the leader is set up").toBeDefined()
  return { world, network, leader: leader! }
}

/** Starts a follower store on node "f" that follows "l" (retrying as a member does). */
const startFollower = (
  world: SimWorld,
  network: SimNetwork,
  wrap: (r: ReplicaLog) => ReplicaLog
): { readonly store: () => EventStoreService | undefined } => {
  let follower: EventStoreService | undefined
  world.fork(
    "f",
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* make(config)
        follower = store
        const replica = wrap(store.replica!)
        const settings = {
          self: "f:1112",
          promotable: true,
          ...timing,
          heartbeatTimeoutMs: 700,
          maxTruncationBytes: -1,
          epochsSent: 20
        }
        yield* Effect.forever(
          Effect.zipRight(
            Effect.scoped(follow(settings, network.service("f:1112"), replica, "l:1112", () => {})),
            Effect.sleep("500 millis")
          )
        )
      })
    ).pipe(Effect.provide(MemoryDisk.layer(new MemoryDisk({ prng: new Prng(5).fork("disk-f") }))))
  )
  return { store: () => follower }
}

describe("replication of a scavenged chunk between real stores", () => {
  it("sends the scavenged file whole to a follower behind it, which installs it and follows the rest", () => {
    const pieces: Array<number> = []
    const { world, network, leader } = leaderWorld({ sendWindowBytes: 16 * 1024, sliceBytes: 700 }, (r) => r)
    const counting = (replica: ReplicaLog): ReplicaLog => ({
      ...replica,
      installChunk: (piece) =>
        Effect.zipRight(
          Effect.sync(() => pieces.push(piece.offset)),
          replica.installChunk(piece)
        )
    })
    const f = startFollower(world, network, counting)
    world.run({
      until: () =>
        f.store()?.replica?.committed() === leader.replica!.committed() &&
        f.store()!.replica!.writerCheckpoint() === leader.replica!.writerCheckpoint(),
      maxSimMs: 30_000
    })
    const follower = f.store()!
    expect(follower.replica!.writerCheckpoint()).toBe(leader.replica!.writerCheckpoint())
    expect(pieces.length, "the file came in several pieces").toBeGreaterThan(2)
    expect(pieces[0]).toBe(0)
    const fileOf = (store: EventStoreService) => {
      const chunk = store.engine.log.chunkAt(0)!
      return Effect.runSync(Effect.flatMap(chunk.handle.size, (size) => chunk.handle.read(0, size)))
    }
    expect(follower.engine.log.chunkAt(0)!.header.endNumber).toBe(1)
    expect(fileOf(follower).equals(fileOf(leader)), "the leader's file, byte for byte").toBe(true)
    const read = (store: EventStoreService) => Effect.runSync(allEvents(store))
    expect(read(follower)).toEqual(read(leader))
    expect(read(follower).some((e) => e.includes(":after:"))).toBe(true)
    // The scavenge dropped "dropped" from chunks 0..1 only.
    const droppedAt = read(follower)
      .filter((e) => e.includes(":dropped:"))
      .map((e) => Number(e.split(":")[0]))
    expect(droppedAt.length).toBeGreaterThan(0)
    expect(Math.min(...droppedAt)).toBeGreaterThanOrEqual(2 * config.chunkSize)
  })

  it("sends no more of a file than the send window while the follower has not acknowledged it", () => {
    const window = { sendWindowBytes: 1000, sliceBytes: 300 }
    const sent: Array<number> = []
    const counting = (replica: ReplicaLog): ReplicaLog => ({
      ...replica,
      readRaw: (from, maxBytes, chunkOffset) =>
        Effect.tap(replica.readRaw(from, maxBytes, chunkOffset), (read) => {
          if (read !== undefined && isRawChunk(read)) sent.push(read.offset + read.bytes.length)
        })
    })
    const { world, network, leader } = leaderWorld(window, counting)
    const dataBytes = leader.engine.log.chunkAt(0)!.footer!.physicalDataSize
    expect(dataBytes, "the file is larger than the window").toBeGreaterThan(3 * window.sendWindowBytes)
    // The follower takes the first piece and never finishes writing it: nothing of the file is acknowledged.
    startFollower(world, network, (replica) => ({ ...replica, installChunk: () => Effect.never }))
    world.run({ maxSimMs: 10_000 })
    expect(sent.length, "the file was started").toBeGreaterThan(0)
    expect(Math.max(...sent)).toBe(Math.ceil(window.sendWindowBytes / window.sliceBytes) * window.sliceBytes)
  })
})
