/**
 * Shared helpers for the stream-rule tests (streams-*.test.ts): a store on an in-memory disk that can be
 * restarted cleanly or after a power loss, event builders, and small assertion helpers.
 *
 * Configurations are tiny (4 KiB chunks, 8-entry memtable) so chunk rollovers and index flushes happen
 * inside the tests; `Hashes` runs a case with the real hash, with every stream colliding, and colliding with
 * caches so small that lookups go to the index and the log.
 */
import { assert } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { Disk, MemoryDisk, Prng, type CrashMode } from "@vellum/platform"
import {
  defaultStorageConfig,
  make,
  type EventStoreService,
  type HashFn,
  type ProposedEvent,
  type StorageConfig,
  type StreamRead
} from "../src/index.js"

export const baseConfig = (overrides: Partial<StorageConfig> = {}): StorageConfig => ({
  ...defaultStorageConfig("/db"),
  chunkSize: 4096,
  memtableMaxEntries: 8,
  preallocateChunks: false,
  ...overrides
})

/** Every stream has the same 64-bit hash: every index lookup has to sort out collisions. */
export const collide: HashFn = () => ({ hi: 0, lo: 1 })

export const Hashes: ReadonlyArray<{ readonly name: string; readonly overrides: Partial<StorageConfig> }> = [
  { name: "real hash", overrides: {} },
  { name: "colliding hash", overrides: { streamHash: collide } },
  {
    name: "colliding hash, tiny caches",
    overrides: { streamHash: collide, streamInfoCacheCapacity: 1, readCacheBytes: 512, memtableMaxEntries: 2 }
  }
]

export type Reopen = "none" | "restart" | "crash"
export const Reopens: ReadonlyArray<Reopen> = ["none", "restart", "crash"]

export const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

export const ev = (
  n: number,
  options: { type?: string; data?: string | Uint8Array; isJson?: boolean; metadata?: string } = {}
): ProposedEvent => ({
  eventId: uuid(n),
  eventType: options.type ?? "T",
  isJson: options.isJson ?? true,
  data: typeof options.data === "string" ? Buffer.from(options.data) : (options.data ?? Buffer.from(`{"i":${n}}`)),
  metadata: Buffer.from(options.metadata ?? "")
})

export const evs = (from: number, count: number): Array<ProposedEvent> =>
  Array.from({ length: count }, (_, i) => ev(from + i))

export const link = (n: number, payload: string): ProposedEvent => ev(n, { type: "$>", data: payload, isJson: false })

export const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))

export interface Db {
  readonly mem: MemoryDisk
  readonly config: StorageConfig
  /** The store of the current incarnation. */
  readonly store: EventStoreService
  /** Closes the store cleanly and opens it again on the same disk. */
  readonly restart: Effect.Effect<void, unknown>
  /** Power loss ("strict" by default: nothing unsynced survives), then opens the store again. */
  readonly crash: (seed?: number, mode?: CrashMode) => Effect.Effect<void, unknown>
  readonly reopen: (how: Reopen) => Effect.Effect<void, unknown>
}

/** Opens a store on a fresh in-memory disk; the current incarnation is closed with the test's scope. */
export const openDb = (overrides: Partial<StorageConfig> = {}): Effect.Effect<Db, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const config = baseConfig(overrides)
    const mem = new MemoryDisk()
    const open = Effect.gen(function* () {
      const scope = yield* Scope.make()
      const store = yield* make(config).pipe(Effect.provideService(Disk, mem.service), Scope.extend(scope))
      return { store, scope }
    })
    let current = yield* open
    yield* Effect.addFinalizer(() => Scope.close(current.scope, Exit.void))
    const restart = Effect.gen(function* () {
      yield* Scope.close(current.scope, Exit.void)
      current = yield* open
    })
    const crash = (seed = 1, mode: CrashMode = "strict") =>
      Effect.gen(function* () {
        mem.crash(new Prng(seed), mode)
        yield* Scope.close(current.scope, Exit.void)
        current = yield* open
      })
    const db: Db = {
      mem,
      config,
      get store() {
        return current.store
      },
      restart,
      crash,
      reopen: (how) => (how === "none" ? Effect.void : how === "restart" ? restart : crash(7))
    }
    return db
  })

// ---- assertions ----

export const expectWev = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>, current: number) =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(effect)
    assert.strictEqual(
      error._tag,
      "WrongExpectedVersion",
      `expected WrongExpectedVersion, got ${JSON.stringify(error)}`
    )
    assert.strictEqual(
      (error as unknown as { currentVersion: number }).currentVersion,
      current,
      "WrongExpectedVersion.currentVersion"
    )
  })

export const expectDeleted = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(effect)
    assert.strictEqual(error._tag, "StreamDeleted", `expected StreamDeleted, got ${JSON.stringify(error)}`)
  })

export const expectInvalid = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>, reason: RegExp) =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(effect)
    assert.strictEqual(error._tag, "InvalidRequest", `expected InvalidRequest, got ${JSON.stringify(error)}`)
    assert.match((error as unknown as { message: string }).message, reason)
  })

/** The event numbers a successful read returned (fails the test for any other result). */
export const numbersOf = (read: StreamRead): Array<number> => {
  assert.strictEqual(read._tag, "Success", `expected a successful read, got ${JSON.stringify(read)}`)
  return read._tag === "Success" ? read.events.map((e) => (e.link ?? e.event)!.eventNumber) : []
}

/** Event numbers of a whole forward read of a stream. */
export const streamNumbers = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamForward(stream, 0, 4096), numbersOf)

/** Event ids of a whole forward read of a stream. */
export const streamIds = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamForward(stream, 0, 4096), (read) => {
    assert.strictEqual(read._tag, "Success", `expected a successful read of ${stream}, got ${read._tag}`)
    return read._tag === "Success" ? read.events.map((e) => e.event!.eventId) : []
  })

/** Every record of `$all`, forward, paging with `pageSize`. */
export const readAll = (store: EventStoreService, pageSize = 4096) =>
  Effect.gen(function* () {
    const out = []
    let position = 0
    for (let guard = 0; guard < 100_000; guard++) {
      const page = yield* store.readAllForward(position, pageSize)
      for (const e of page.events) out.push(e.event!)
      if (page.isEnd) return out
      assert.isAbove(page.nextPosition, position, "nextPosition must move forward")
      position = page.nextPosition
    }
    throw new Error("readAll did not end")
  })

/** Every record of `$all`, backward from the end, paging with `pageSize`. */
export const readAllBackward = (store: EventStoreService, pageSize = 4096) =>
  Effect.gen(function* () {
    const out = []
    let position = -1
    for (let guard = 0; guard < 100_000; guard++) {
      const page = yield* store.readAllBackward(position, pageSize)
      for (const e of page.events) out.push(e.event!)
      if (page.isEnd) return out
      position = page.nextPosition
    }
    throw new Error("readAllBackward did not end")
  })

export const metadataJson = (store: EventStoreService, stream: string) =>
  Effect.map(
    store.getStreamMetadata(stream),
    (m) => (m.raw === undefined ? undefined : JSON.parse(m.raw.toString("utf8"))) as Record<string, unknown> | undefined
  )
