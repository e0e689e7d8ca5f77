/**
 * Helpers for the clustered-store tests (replica-*.test.ts): clustered stores on their own MemoryDisks
 * that can be restarted or crashed, a quorum gate the test holds and releases, and the follower's pull
 * loop (readRaw on the leader, appendRaw on the follower, then commitTo the leader's committed position).
 */
import { assert } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { powerCutDisk, type PowerCut } from "./log-support.js"
import { Disk, MemoryDisk, Prng, type CrashMode, type DiskService } from "@vellum/platform"
import {
  isRawChunk,
  make,
  type CommitGate,
  type EventStoreService,
  type NotLeading,
  type RawChunk,
  type RawSlice,
  type ReplicaLog
} from "../src/index.js"
import { baseConfig } from "./streams-harness.js"

export interface Node {
  readonly mem: MemoryDisk
  readonly store: EventStoreService
  readonly replica: ReplicaLog
  readonly restart: Effect.Effect<void, unknown>
  readonly crash: (seed?: number, mode?: CrashMode) => Effect.Effect<void, unknown>
}

/** The clustered stores' configuration. */
export const clusteredConfig = baseConfig({ clustered: true, commitTimeoutMillis: 2_000 })

/** A clustered store on a fresh MemoryDisk (or through `disk`, a Disk over `mem`); closed with the test's scope. */
export const openNode = (
  options: { readonly mem?: MemoryDisk; readonly disk?: DiskService; readonly eventIdCacheCapacity?: number } = {}
): Effect.Effect<Node, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const mem = options.mem ?? new MemoryDisk()
    const config = baseConfig({
      ...clusteredConfig,
      ...(options.eventIdCacheCapacity !== undefined ? { eventIdCacheCapacity: options.eventIdCacheCapacity } : {})
    })
    const open = (disk: DiskService) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const store = yield* make(config).pipe(Effect.provideService(Disk, disk), Scope.extend(scope))
        return { store, scope }
      })
    let current = yield* open(options.disk ?? mem.service)
    yield* Effect.addFinalizer(() => Scope.close(current.scope, Exit.void))
    const node: Node = {
      mem,
      get store() {
        return current.store
      },
      get replica() {
        const replica = current.store.replica
        assert.isDefined(replica, "a clustered store has a replica")
        return replica!
      },
      restart: Effect.gen(function* () {
        yield* Scope.close(current.scope, Exit.void)
        current = yield* open(mem.service)
      }),
      crash: (seed = 1, mode: CrashMode = "strict") =>
        Effect.gen(function* () {
          mem.crash(new Prng(seed), mode)
          yield* Scope.close(current.scope, Exit.void)
          current = yield* open(mem.service)
        })
    }
    return node
  })

/**
 * A fresh clustered store on a power-cut disk: `prepare`, then `step` with the power cut before its
 * `budget`-th mutating disk operation, then a power loss. Says whether the step ran whole (no cut reached
 * it), where the cut was, and gives the crashed disk to open a node on.
 */
export const cutDuring = (
  budget: number,
  prepare: (replica: ReplicaLog) => Effect.Effect<void, unknown>,
  step: (replica: ReplicaLog) => Effect.Effect<void, unknown>
) =>
  Effect.gen(function* () {
    const mem = new MemoryDisk()
    const cut: PowerCut = { budget: Number.POSITIVE_INFINITY, used: 0, cutAt: undefined }
    const scope = yield* Scope.make()
    const store = yield* make(clusteredConfig).pipe(
      Effect.provideService(Disk, powerCutDisk(mem, cut)),
      Scope.extend(scope)
    )
    yield* prepare(store.replica!)
    cut.budget = cut.used + budget
    const done = yield* Effect.exit(step(store.replica!))
    mem.crash(new Prng(budget + 1), "random")
    yield* Scope.close(scope, Exit.void)
    return { whole: Exit.isSuccess(done) && cut.cutAt === undefined, cutAt: cut.cutAt, mem }
  })

/** A gate that lets everything through at once. */
export const openGate: CommitGate = () => Effect.void

/** A quorum gate the test controls: writes wait until `release` covers their end, or `fail` ends them. */
export class HeldGate {
  private released = -1
  private waiting: Array<{ readonly end: number; readonly done: Deferred.Deferred<void, NotLeading> }> = []

  readonly gate: CommitGate = (end) =>
    Effect.suspend(() => {
      if (end <= this.released) return Effect.void
      return Effect.flatMap(Deferred.make<void, NotLeading>(), (done) => {
        this.waiting.push({ end, done })
        return Deferred.await(done)
      })
    })

  /** How many writes wait for their quorum. */
  get pending(): number {
    return this.waiting.length
  }

  readonly release = (to: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      this.released = Math.max(this.released, to)
      const ready = this.waiting.filter((w) => w.end <= to)
      this.waiting = this.waiting.filter((w) => w.end > to)
      return Effect.forEach(ready, (w) => Deferred.succeed(w.done, undefined), { discard: true })
    })

  readonly fail: Effect.Effect<void> = Effect.suspend(() => {
    const all = this.waiting
    this.waiting = []
    return Effect.forEach(all, (w) => Deferred.fail(w.done, { _tag: "NotLeading" } as NotLeading), { discard: true })
  })
}

/** A slice of records from `from` (not a scavenged chunk's file), or undefined at the writer checkpoint. */
export const sliceAt = (replica: ReplicaLog, from: number, maxBytes: number) =>
  Effect.map(replica.readRaw(from, maxBytes), (read): RawSlice | undefined => {
    assert.isFalse(read !== undefined && isRawChunk(read), `${from} is not in a scavenged chunk`)
    return read as RawSlice | undefined
  })

/** Every piece, in order, of the scavenged chunk file holding `from` (the leader sends them so). */
export const chunkPieces = (replica: ReplicaLog, from: number, maxBytes: number) =>
  Effect.gen(function* () {
    const pieces: Array<RawChunk> = []
    for (let offset = 0; ;) {
      const piece = yield* replica.readRaw(from, maxBytes, offset)
      assert.isTrue(piece !== undefined && isRawChunk(piece), `${from} is in a scavenged chunk`)
      const chunk = piece as RawChunk
      pieces.push(chunk)
      offset += chunk.bytes.length
      if (offset >= chunk.fileSize) return pieces
    }
  })

/**
 * The follower copies the leader's log up to its writer checkpoint, in slices of about `maxBytes` (a
 * scavenged chunk's file whole, in pieces of that size).
 */
export const pull = (leader: ReplicaLog, follower: ReplicaLog, maxBytes = 700) =>
  Effect.gen(function* () {
    for (let guard = 0; guard < 100_000; guard++) {
      const from = follower.writerCheckpoint()
      const slice = yield* leader.readRaw(from, maxBytes)
      if (slice === undefined) return
      if (!isRawChunk(slice)) {
        yield* follower.appendRaw(slice)
        continue
      }
      for (const piece of yield* chunkPieces(leader, from, maxBytes)) yield* follower.installChunk(piece)
    }
    throw new Error("pull did not end")
  })

/** Pulls, then commits as far as the leader has. */
export const follow = (leader: ReplicaLog, follower: ReplicaLog, maxBytes = 700) =>
  Effect.gen(function* () {
    yield* pull(leader, follower, maxBytes)
    yield* follower.commitTo(leader.committed())
  })

/**
 * Every slice of a log from 0 to its writer checkpoint, and every scavenged chunk's file whole (the raw bytes
 * two logs must agree on).
 */
export const rawLog = (replica: ReplicaLog) =>
  Effect.gen(function* () {
    const out: Array<{ position: number; end: number; completesChunk: boolean; bytes: Array<number> }> = []
    let from = 0
    for (let guard = 0; guard < 100_000; guard++) {
      const slice = yield* replica.readRaw(from, 1 << 20)
      if (slice === undefined) return out
      if (isRawChunk(slice)) {
        const file = (yield* chunkPieces(replica, from, 1 << 20)).flatMap((piece) => [...piece.bytes])
        const end = (slice.endNumber + 1) * replica.chunkSize
        out.push({ position: slice.startNumber * replica.chunkSize, end, completesChunk: true, bytes: file })
        from = end
        continue
      }
      out.push({
        position: slice.position,
        end: slice.end,
        completesChunk: slice.completesChunk,
        bytes: [...slice.bytes]
      })
      from = slice.completesChunk ? (Math.floor(slice.position / replica.chunkSize) + 1) * replica.chunkSize : slice.end
    }
    throw new Error("rawLog did not end")
  })

export const ID_A = "00000000-0000-4000-8000-0000000000aa"
export const ID_B = "00000000-0000-4000-8000-0000000000bb"

/** Lets forked fibers run until they block (on a gate, or with nothing left to do). */
export const settle = Effect.repeatN(Effect.yieldNow(), 50)

/** `node` leads `term` behind a held gate, which lets the epoch through (it waited for it); returns the gate. */
export const leadHeld = (node: Node, term: number, leaderId = ID_A) =>
  Effect.gen(function* () {
    const gate = new HeldGate()
    const leading = yield* Effect.fork(node.replica.lead(term, leaderId, gate.gate))
    yield* settle
    assert.strictEqual(gate.pending, 1, "the epoch waits for its quorum")
    yield* gate.release(node.replica.writerCheckpoint())
    yield* Fiber.join(leading)
    return gate
  })
