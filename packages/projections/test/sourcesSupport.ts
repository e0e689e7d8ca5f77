// A store on a memory disk and helpers to write what a projection's source reads, for the sources tests.
import { Effect, type Scope } from "effect"
import { MemoryDisk } from "@vellum/platform"
import {
  ExpectedVersion,
  defaultStorageConfig,
  make as makeEventStore,
  type EventStoreService,
  type StorageConfig
} from "@vellum/storage"
import type { SourceDefinition, SourceItem, SourceReader } from "../src/index.js"
import { definitionWith } from "./languageSupport.js"
import { encodeCheckpointTag } from "../src/index.js"

export const storageConfig: StorageConfig = {
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  memtableMaxEntries: 64,
  preallocateChunks: false
}

export const openStore = (
  config: StorageConfig = storageConfig
): Effect.Effect<EventStoreService, never, Scope.Scope> =>
  makeEventStore(config).pipe(Effect.provide(MemoryDisk.layer(new MemoryDisk())), Effect.orDie)

let idCounter = 0
const nextId = () => `00000000-0000-4000-8000-${String(++idCounter).padStart(12, "0")}`

export interface Proposed {
  readonly type?: string
  readonly data?: string
  readonly metadata?: string
  readonly isJson?: boolean
}

/** Appends one event; its log position. */
export const append = (store: EventStoreService, stream: string, event: Proposed = {}): Effect.Effect<number> =>
  Effect.map(
    Effect.orDie(
      store.append(stream, ExpectedVersion.Any, [
        {
          eventId: nextId(),
          eventType: event.type ?? "thing",
          isJson: event.isJson ?? true,
          data: Buffer.from(event.data ?? "{}"),
          metadata: Buffer.from(event.metadata ?? "")
        }
      ])
    ),
    (result) => result.position
  )

/** A link `{number}@{target}` into `stream`. */
export const appendLink = (store: EventStoreService, stream: string, target: string, metadata = "") =>
  append(store, stream, { type: "$>", data: target, metadata, isJson: false })

export const hardDelete = (store: EventStoreService, stream: string) =>
  Effect.orDie(store.deleteStream(stream, ExpectedVersion.Any, true))

export const softDelete = (store: EventStoreService, stream: string) =>
  Effect.orDie(store.deleteStream(stream, ExpectedVersion.Any, false))

export const setMetadata = (store: EventStoreService, stream: string, json: string) =>
  Effect.orDie(store.setStreamMetadata(stream, ExpectedVersion.Any, Buffer.from(json)))

/** A definition: everything from every stream unless `changes` say otherwise. */
export const definition = definitionWith

export const fromAll = (changes: Partial<Omit<SourceDefinition, "options">> = {}, options = {}) =>
  definition({ allStreams: true, ...changes }, options)

/** Every item after `startTag` read in batches of `batchSize` until the end, and the batches' shapes. */
export const readToEnd = (reader: SourceReader, batchSize: number, after = reader.startTag) =>
  Effect.gen(function* () {
    const items: Array<SourceItem> = []
    let tag = after
    let batches = 0
    for (;;) {
      const batch = yield* Effect.orDie(reader.read(tag, batchSize))
      items.push(...batch.items)
      tag = batch.next
      batches++
      if (batch.atEnd) return { items, next: tag, batches }
      if (batches > 10_000) throw new Error("the reader never reached the end")
    }
  })

/** What identifies an item, for comparing reads. */
export const itemKey = (item: SourceItem): string =>
  [
    item.kind,
    item.event.stream,
    item.event.eventNumber,
    item.event.logPosition,
    item.link?.logPosition ?? "-",
    encodeCheckpointTag(item.tag),
    item.logPosition,
    item.category ?? "-",
    item.partitionStream
  ].join("|")

/** `stream#number` of what the handlers see. */
export const seen = (items: ReadonlyArray<SourceItem>): Array<string> =>
  items.map((item) => `${item.kind === "deleted" ? "deleted:" : ""}${item.event.stream}#${item.event.eventNumber}`)
