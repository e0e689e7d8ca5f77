// A store on a memory disk, and the small vocabulary the output writer's tests speak: positions, causes,
// writes, what a stream holds.
import { Effect, Exit, Scope } from "effect"
import { MemoryDisk } from "@vellum/platform"
import {
  ExpectedVersion,
  defaultStorageConfig,
  make as makeEventStore,
  originalEvent,
  type EventStoreService,
  type StorageConfig
} from "@vellum/storage"
import type { CheckpointTag, ProjectionVersion } from "../src/persisted/checkpointTag.js"
import { encodeEmittedMetadata } from "../src/persisted/emittedMetadata.js"
import type { OutputWriter, OutputWriterSpec, WriteCause } from "../src/engine/OutputWriter.js"
import type { EmittedWrite } from "../src/engine/ProjectionHandler.js"
import { makeOutputWriter } from "../src/engine/output/makeOutputWriter.js"

const storageConfig: StorageConfig = {
  ...defaultStorageConfig("/db"),
  chunkSize: 256 * 1024,
  memtableMaxEntries: 256,
  preallocateChunks: false
}

/** A fresh store on a memory disk, open for the scope. */
export const openStore: Effect.Effect<EventStoreService, never, Scope.Scope> = Effect.suspend(() =>
  makeEventStore(storageConfig).pipe(Effect.provide(MemoryDisk.layer(new MemoryDisk())), Effect.orDie)
)

export const version0: ProjectionVersion = { projectionId: 7, epoch: 0, version: 0 }

export const specOf = (changes: Partial<OutputWriterSpec> = {}): OutputWriterSpec => ({
  name: "p",
  version: version0,
  trackEmittedStreams: false,
  maxWriteBatchLength: 500,
  maxAllowedWritesInFlight: 0,
  ...changes
})

/** The `$all` position `n`. */
export const at = (n: number): CheckpointTag => ({ kind: "position", phase: 0, commit: n * 100, prepare: n * 100 })

/** The cause of item `n`: position `n`, causing event id derived from `n`. */
export const causeOf = (n: number, correlationId?: string): WriteCause => ({
  tag: at(n),
  eventId: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  correlationId
})

export const emit = (stream: string, data: string, eventType = "thing"): EmittedWrite => ({
  stream,
  eventType,
  isJson: true,
  data,
  extraMetadata: []
})

/** A result link: `data` is the number of the event the same item wrote last into `target`. */
export const resultLink = (stream: string, target: string): EmittedWrite => ({
  stream,
  eventType: "$>",
  isJson: false,
  data: "",
  extraMetadata: [],
  linkToWrittenIn: target
})

/** A writer over `store` (written through `writer`, the store itself by default), open in a scope of its own. */
export const startWriter = (
  store: EventStoreService,
  spec: OutputWriterSpec = specOf(),
  writer: EventStoreService = store,
  idleStreamsKept?: number
): Effect.Effect<{ readonly output: OutputWriter; readonly scope: Scope.CloseableScope }> =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const deps = idleStreamsKept === undefined ? { store, writer } : { store, writer, idleStreamsKept }
    const output = yield* makeOutputWriter(deps)(spec).pipe(Scope.extend(scope))
    return { output, scope }
  })

export const closeWriter = (scope: Scope.CloseableScope): Effect.Effect<void> => Scope.close(scope, Exit.void)

export interface StoredEvent {
  readonly number: number
  readonly type: string
  readonly isJson: boolean
  readonly data: string
  readonly metadata: string
}

/** The events a reader of `stream` sees, oldest first. */
export const eventsOf = (store: EventStoreService, stream: string): Effect.Effect<ReadonlyArray<StoredEvent>> =>
  Effect.map(Effect.orDie(store.readStreamForward(stream, 0, 4096)), (read) =>
    read._tag !== "Success"
      ? []
      : read.events.map((resolved) => {
          const event = originalEvent(resolved)
          return {
            number: event.eventNumber,
            type: event.eventType,
            isJson: (event.flags & 1) === 1,
            data: event.data.toString("utf8"),
            metadata: event.metadata.toString("utf8")
          }
        })
  )

export const dataOf = (store: EventStoreService, stream: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(eventsOf(store, stream), (events) => events.map((event) => event.data))

/** The text of `stream`'s metadata ("" when it has none). */
export const metadataOf = (store: EventStoreService, stream: string): Effect.Effect<string> =>
  Effect.map(Effect.orDie(store.getStreamMetadata(stream)), (read) => read.raw?.toString("utf8") ?? "")

let nextId = 0
const freshId = () => `10000000-0000-4000-8000-${String(++nextId).padStart(12, "0")}`

/** Appends raw events to `stream` (as another writer would), metadata as given. */
export const appendRaw = (
  store: EventStoreService,
  stream: string,
  events: ReadonlyArray<{ readonly data: string; readonly metadata: string; readonly type?: string }>
): Effect.Effect<void> =>
  Effect.asVoid(
    Effect.orDie(
      store.append(
        stream,
        ExpectedVersion.Any,
        events.map((event) => ({
          eventId: freshId(),
          eventType: event.type ?? "thing",
          isJson: true,
          data: Buffer.from(event.data),
          metadata: Buffer.from(event.metadata)
        }))
      )
    )
  )

/** The metadata the writer stamps on a write of item `n` by projection `version`. */
export const stampOf = (n: number, version: ProjectionVersion = version0): string =>
  encodeEmittedMetadata(at(n), version, { causedBy: causeOf(n).eventId })
