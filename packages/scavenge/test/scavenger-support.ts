/**
 * A scavenger over a real store on an in-memory disk, for the end-to-end tests: open, write, scavenge to
 * completion, read the log back, restart or crash the node.
 */
import { Effect, Exit, Scope } from "effect"
import { Disk, MemoryDisk, join, type DiskService } from "@vellum/platform"
import {
  EventStore,
  RecordKind,
  defaultStorageConfig,
  make,
  type EventStoreService,
  type LogRecord,
  type ProposedEvent,
  type StorageConfig
} from "@vellum/storage"
import { makeScavenger, type ScavengerSettings } from "../src/makeScavenger.js"
import { STATE_FOLDER } from "../src/ScavengerLayer.js"
import { openStateSession, type StateError } from "../src/state/index.js"
import type { ScavengerService, StartScavengeOptions } from "../src/Scavenger.js"
import type { StateAccess } from "../src/phases/StateAccess.js"

export const storageConfig = (overrides: Partial<StorageConfig> = {}): StorageConfig => ({
  ...defaultStorageConfig("/db"),
  chunkSize: 4096,
  memtableMaxEntries: 8,
  preallocateChunks: false,
  ...overrides
})

export const settings: ScavengerSettings = {
  nodeEndpoint: "127.0.0.1:2113",
  historyMaxAgeDays: 30,
  disableMerging: false,
  unsafeIgnoreHardDeletes: false
}

export const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
let nextId = 1
export const ev = (data: unknown = { n: nextId }): ProposedEvent => ({
  eventId: uuid(nextId++),
  eventType: "T",
  isJson: true,
  data: Buffer.from(JSON.stringify(data)),
  metadata: Buffer.alloc(0)
})
export const evs = (count: number) => Array.from({ length: count }, () => ev())
export const json = (value: unknown) => Buffer.from(JSON.stringify(value))

export interface Node {
  readonly mem: MemoryDisk
  readonly store: EventStoreService
  readonly scavenger: ScavengerService
  readonly scope: Scope.CloseableScope
}

/** Changes the state the scavenger sees (e.g. to stop a run right after its k-th commit). */
export type StateWrapper = (state: StateAccess<StateError>) => StateAccess<StateError>

export interface NodeOptions {
  readonly settings?: ScavengerSettings
  readonly wrap?: StateWrapper
  /** The state's ScavengeBackendCacheSize (default 1 MiB: everything resident; 0 pages every row out). */
  readonly stateCacheBytes?: number
  /** Wraps the disk the node sees (e.g. to damage reads in transit). */
  readonly disk?: (disk: DiskService) => DiskService
}

export const openNode = (mem: MemoryDisk, config: StorageConfig, options: NodeOptions = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const open = Effect.gen(function* () {
      const store = yield* make(config)
      const session = yield* Effect.acquireRelease(
        openStateSession(join(config.dir, STATE_FOLDER), {
          pageSize: 4096,
          cacheBytes: options.stateCacheBytes ?? 1 << 20
        }),
        (s) => Effect.ignore(s.close)
      )
      const state = options.wrap === undefined ? session : options.wrap(session)
      const scavenger = yield* Effect.provideService(
        makeScavenger(options.settings ?? settings, state),
        EventStore,
        store
      )
      return { mem, store, scavenger, scope } satisfies Node
    })
    return yield* open.pipe(
      Scope.extend(scope),
      Effect.provideService(Disk, options.disk === undefined ? mem.service : options.disk(mem.service))
    )
  })

/** Interrupts the run right after the state's `k`-th commit (1-based) — a stop at that checkpoint. */
export const stopAfterCommit =
  (k: number, counter: { commits: number }): StateWrapper =>
  (state) => ({
    ...state,
    commit: (checkpoint) =>
      Effect.flatMap(state.commit(checkpoint), () => (++counter.commits === k ? Effect.interrupt : Effect.void))
  })

/** A copy of every file of a disk (current bytes, all synced) on a new disk. */
export const copyDisk = (mem: MemoryDisk) =>
  Effect.gen(function* () {
    const copy = new MemoryDisk()
    const disk = copy.service
    for (const path of mem.files()) {
      const dir = path.slice(0, path.lastIndexOf("/")) || "/"
      yield* disk.mkdir(dir)
      const handle = yield* disk.open(path, { create: true })
      yield* handle.write(0, mem.readFileSync(path))
      yield* handle.sync
      yield* handle.close
      yield* disk.syncDir(dir)
    }
    return copy
  })

export const closeNode = (node: Node) => Scope.close(node.scope, Exit.void)

export const defaults: StartScavengeOptions = {
  threads: 1,
  threshold: undefined,
  throttlePercent: 100,
  syncOnly: false,
  startFromChunk: 0
}

/** Lets the background run go on until it has finished (nothing in it sleeps at 100% throttle). */
export const awaitRun = (scavenger: ScavengerService) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1_000_000; i++) {
      const last = yield* scavenger.last
      if (last.result !== "InProgress" && (yield* scavenger.current) === undefined) return last
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage("scavenge did not finish")
  })

export const scavenge = (node: Node, options: Partial<StartScavengeOptions> = {}) =>
  Effect.gen(function* () {
    const { scavengeId } = yield* node.scavenger.start({ ...defaults, ...options })
    const last = yield* awaitRun(node.scavenger)
    return { scavengeId, result: last.result }
  })

/** Every record in the log, in position order. */
export const logRecords = (store: EventStoreService) =>
  Effect.gen(function* () {
    const { log, readIndex } = store.engine
    const out: Array<LogRecord> = []
    let position = 0
    const limit = readIndex.committed()
    while (true) {
      const scan = yield* log.scanForward(position, limit, 4096)
      out.push(...scan.records)
      if (scan.reachedEnd || scan.records.length === 0) return out
      position = scan.next
    }
  })

export const eventPositions = (records: ReadonlyArray<LogRecord>, below: number) =>
  new Set(records.filter((r) => r.kind === RecordKind.Event && r.logPosition < below).map((r) => r.logPosition))

export const eventNumbers = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamForward(stream, 0, 4096), (r) =>
    r._tag === "Success" ? r.events.map((e) => e.event!.eventNumber) : r._tag
  )

/** Records from `from` (a record boundary) to the end of the committed log, and where the next one will start. */
export const recordsFrom = (store: EventStoreService, from: number) =>
  Effect.gen(function* () {
    const { log, readIndex } = store.engine
    const out: Array<LogRecord> = []
    let position = from
    const limit = readIndex.committed()
    while (position < limit) {
      const scan = yield* log.scanForward(position, limit, 4096)
      out.push(...scan.records)
      position = scan.next
      if (scan.reachedEnd || scan.records.length === 0) break
    }
    return { records: out, next: Math.max(position, from) }
  })

/**
 * The log AS WRITTEN (what the reference model takes), kept up to date by `sync`: records appended since the
 * last sync are read before any scavenge can remove them (a scavenge only removes records before its point,
 * and every record before it was synced first).
 */
export class WrittenLog {
  readonly records: Array<LogRecord> = []
  private next = 0
  readonly sync = (store: EventStoreService) =>
    Effect.map(recordsFrom(store, this.next), (r) => {
      this.records.push(...r.records)
      this.next = r.next
    })
  /** A log of its own with what this one has synced so far (for two nodes that go on from one disk). */
  readonly copy = (): WrittenLog => {
    const copy = new WrittenLog()
    copy.records.push(...this.records)
    copy.next = this.next
    return copy
  }
}

/** The positions `$all` shows (links unresolved), in order. */
export const allPositions = (store: EventStoreService) =>
  Effect.gen(function* () {
    const out: Array<number> = []
    let position = 0
    while (true) {
      const page = yield* store.readAllForward(position, 1000, {})
      for (const e of page.events) out.push(e.event!.logPosition)
      if (page.isEnd || page.events.length === 0) return out
      position = page.nextPosition
    }
  })

/** What a forward read of a stream shows (links unresolved): its outcome and the (number, id) of each event. */
export const streamView = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamForward(stream, 0, 4096), (r) =>
    r._tag === "Success" ? r.events.map((e) => `${e.event!.eventNumber}:${e.event!.eventId}`) : r._tag
  )

/** Deletes the scavenge state (as deleting `scavenging.db` upstream): the next run starts with no checkpoint. */
export const deleteState = (mem: MemoryDisk, config: StorageConfig) =>
  Effect.gen(function* () {
    const folder = join(config.dir, STATE_FOLDER)
    for (const path of mem.files()) if (path.startsWith(`${folder}/`)) yield* mem.service.remove(path)
    yield* mem.service.syncDir(folder)
  })
