// Fakes for the engine's tests: a store on a memory disk, a source over its `$all` (user streams only), handlers
// that count, partition, emit or fail, and an output writer that records what is queued (and can be held or fail).
import { Deferred, Effect, TestClock, type Scope } from "effect"
import { DiskError, MemoryDisk } from "@vellum/platform"
import {
  ExpectedVersion,
  defaultStorageConfig,
  make as makeEventStore,
  originalEvent,
  type EventStoreService,
  type StorageConfig
} from "@vellum/storage"
import type {
  CheckpointTag,
  EmittedWrite,
  HandlerFault,
  HandlerOutcome,
  OutputWriter,
  OutputWriterSpec,
  ProjectionHandler,
  ProjectionRunner,
  RunnerSpec,
  SourceDefinition,
  SourceItem,
  SourceReader,
  WriteCause
} from "../src/index.js"
import { compareCheckpointTags } from "../src/index.js"
import { startProjectionRunner } from "../src/engine/startProjectionRunner.js"
import { definitionWith } from "./languageSupport.js"

export const storageConfig: StorageConfig = {
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  memtableMaxEntries: 64,
  preallocateChunks: false
}

export const openStore = (): Effect.Effect<EventStoreService, never, Scope.Scope> =>
  makeEventStore(storageConfig).pipe(Effect.provide(MemoryDisk.layer(new MemoryDisk())), Effect.orDie)

let idCounter = 0
const nextId = () => `00000000-0000-4000-8000-${String(++idCounter).padStart(12, "0")}`

/** Appends events of `type` (data `{"n":i}`) to `stream`. */
export const appendEvents = (
  store: EventStoreService,
  stream: string,
  count: number,
  type = "thing",
  metadata = ""
): Effect.Effect<void> =>
  Effect.orDie(
    store.append(
      stream,
      ExpectedVersion.Any,
      Array.from({ length: count }, (_, i) => ({
        eventId: nextId(),
        eventType: type,
        isJson: true,
        data: Buffer.from(JSON.stringify({ n: i })),
        metadata: Buffer.from(metadata)
      }))
    )
  )

/** Lets forked fibers run, then moves the test clock. */
export const settle = (millis = 0) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000; i++) yield* Effect.yieldNow()
    if (millis > 0) yield* TestClock.adjust(millis)
    for (let i = 0; i < 1000; i++) yield* Effect.yieldNow()
  })

export const startTag: CheckpointTag = { kind: "position", phase: 0, commit: 0, prepare: -1 }
const tagAt = (logPosition: number): CheckpointTag => ({
  kind: "position",
  phase: 0,
  commit: logPosition,
  prepare: logPosition
})

/** A `fromAll` source over the store: user streams only; a `$`-stream's record counts 100 skipped bytes. */
export interface FakeSource extends SourceReader {
  reads: number
  /** Reads that fail (with a disk error) before reads succeed again. */
  failNextReads: number
}

export const storeSource = (store: EventStoreService, options: { readonly deletedType?: string } = {}): FakeSource => {
  const source: FakeSource = {
    reads: 0,
    failNextReads: 0,
    startTag,
    touches: () => true,
    read: (after, maxItems) =>
      Effect.gen(function* () {
        if (source.failNextReads > 0) {
          source.failNextReads--
          return yield* Effect.fail(
            new DiskError({ reason: "IOError", op: "read", path: "/db", message: "read failed" })
          )
        }
        source.reads++
        // Reads from the last record read (a position inside a record finds nothing) and skips it.
        const last = after.kind === "position" ? after.prepare : -1
        const page = yield* store.readAllForward(Math.max(0, last), maxItems + 1)
        const items: Array<SourceItem> = []
        let next = after
        let logPosition = last
        let skippedBytes = 0
        for (const resolved of page.events) {
          const record = originalEvent(resolved)
          if (record.logPosition <= last || items.length === maxItems) continue
          next = tagAt(record.logPosition)
          logPosition = record.logPosition
          if (record.stream.startsWith("$")) {
            skippedBytes += 100
            continue
          }
          items.push({
            kind: record.eventType === options.deletedType ? "deleted" : "event",
            event: record,
            link: undefined,
            tag: next,
            logPosition: record.logPosition,
            category: null,
            partitionStream: record.stream
          })
        }
        return { items, next, atEnd: page.isEnd, skippedBytes, logPosition }
      })
  }
  return source
}

/** What a fake handler saw: each item's partition and the state it was given (undefined: none). */
export interface HandlerCall {
  readonly partition: string
  readonly state: string | undefined
  readonly eventType: string
}

export interface FakeHandlerOptions {
  /** Items of this event type throw (message "boom at {n}", stack "at handler"). */
  readonly failOn?: string
  /** Each event also asks to write a link into `out-{stream}`. */
  readonly emit?: boolean
  /** The result of a state (default: the state itself). */
  readonly resultOf?: (state: string) => string | null
  /** `partitionBy`: the event's data member `p` (undefined when absent: the item is skipped). */
  readonly partitionByData?: boolean
  /** Each `process` call first waits for this gate. */
  gate?: Deferred.Deferred<void>
  /** Pads the state with this many characters (for the state-size limit). */
  readonly padding?: number
}

export interface FakeHandler extends ProjectionHandler {
  readonly calls: Array<HandlerCall>
}

const countOf = (state: string): number => (state === "" ? 0 : (JSON.parse(state) as { count: number }).count)

/**
 * Counts the events of each partition: state `{"count":n}`. It holds the live state of one partition, as a
 * sandbox does, so a wrong `state` from the runner shows in the counts.
 */
export const countingHandler = (options: FakeHandlerOptions = {}): FakeHandler => {
  let live: { partition: string; count: number } | undefined
  const calls: Array<HandlerCall> = []
  const stateText = (count: number) =>
    options.padding === undefined
      ? JSON.stringify({ count })
      : JSON.stringify({ count, pad: "x".repeat(options.padding) })
  return {
    calls,
    partitionsOf: (items) =>
      Effect.succeed(
        items.map((item) => {
          if (!options.partitionByData) return ""
          const data = JSON.parse(item.event.data.toString("utf8")) as { p?: string }
          return data.p
        })
      ),
    process: (items) =>
      Effect.gen(function* () {
        if (options.gate !== undefined) yield* Deferred.await(options.gate)
        const done: Array<HandlerOutcome> = []
        for (let index = 0; index < items.length; index++) {
          const item = items[index]!
          calls.push({ partition: item.partition, state: item.state, eventType: item.source.event.eventType })
          if (item.source.event.eventType === options.failOn) {
            const fault: HandlerFault = {
              _tag: "HandlerFault",
              index,
              message: `boom at ${item.source.event.eventNumber}`,
              stack: "at handler",
              done
            }
            return yield* Effect.fail(fault)
          }
          let created = false
          if (item.state !== undefined) {
            created = item.state === ""
            live = { partition: item.partition, count: countOf(item.state) }
          }
          if (live === undefined || live.partition !== item.partition) throw new Error("no live state for the item")
          const before = stateText(live.count)
          live.count++
          const state = stateText(live.count)
          const emitted: Array<EmittedWrite> = options.emit
            ? [
                {
                  stream: `out-${item.source.event.stream}`,
                  eventType: "$>",
                  isJson: false,
                  data: `${item.source.event.eventNumber}@${item.source.event.stream}`,
                  extraMetadata: []
                }
              ]
            : []
          done.push({
            state,
            stateChanged: state !== before || created,
            result: options.resultOf === undefined ? state : options.resultOf(state),
            emitted,
            created
          })
        }
        return done
      }),
    forgetLiveState: () => {
      live = undefined
    },
    memoryBytes: () => 0
  }
}

export interface Enqueued {
  readonly cause: WriteCause
  readonly writes: ReadonlyArray<EmittedWrite>
}

/** Records what is queued; everything is durable at once unless `held`, or the writer faulted. */
export interface FakeOutput extends OutputWriter {
  readonly enqueued: Array<Enqueued>
  /** Pending events the writer reports (set by a test). */
  pending: number
  /** While set, a flush waits for it. */
  held: Deferred.Deferred<void> | undefined
  faultWith: string | undefined
  flushes: number
  spec: OutputWriterSpec | undefined
}

export const fakeOutput = (): FakeOutput => {
  const output: FakeOutput = {
    enqueued: [],
    pending: 0,
    held: undefined,
    faultWith: undefined,
    flushes: 0,
    spec: undefined,
    enqueue: (cause, writes) => {
      // As the real writer insists: causes strictly move forward.
      const last = output.enqueued[output.enqueued.length - 1]?.cause.tag
      if (last !== undefined && compareCheckpointTags(cause.tag, last) !== 1)
        throw new Error("a cause did not move forward")
      output.enqueued.push({ cause, writes })
    },
    flush: Effect.suspend(() =>
      Effect.gen(function* () {
        if (output.held !== undefined) yield* Deferred.await(output.held)
        if (output.faultWith !== undefined)
          return yield* Effect.fail({ _tag: "OutputFault" as const, reason: output.faultWith })
        output.flushes++
        output.pending = 0
      })
    ),
    pendingEvents: () => output.pending,
    writesInFlight: () => 0,
    fault: () => (output.faultWith === undefined ? undefined : { _tag: "OutputFault", reason: output.faultWith })
  }
  return output
}

/** A `fromAll` definition with a fold, with `overrides` applied. */
export const definitionOf = (
  overrides: Partial<Omit<SourceDefinition, "options">> & { options?: Partial<SourceDefinition["options"]> } = {}
): SourceDefinition => {
  const { options, ...changes } = overrides
  return definitionWith({ allStreams: true, ...changes }, { definesFold: true, ...options })
}

export const specOf = (
  overrides: Partial<Omit<RunnerSpec, "thresholds">> & { thresholds?: Partial<RunnerSpec["thresholds"]> } = {}
): RunnerSpec => ({
  name: "p",
  version: { projectionId: 7, epoch: 0, version: 1 },
  mode: "Continuous",
  definition: definitionOf(),
  emitEnabled: false,
  checkpointsEnabled: true,
  trackEmittedStreams: false,
  maxStateSizeBytes: 1_000_000,
  stopOnEof: false,
  system: false,
  ...overrides,
  thresholds: {
    checkpointHandledThreshold: 4,
    checkpointAfterMs: 0,
    checkpointUnhandledBytesThreshold: 10_000_000,
    pendingEventsThreshold: 100,
    maxWriteBatchLength: 500,
    maxAllowedWritesInFlight: 0,
    ...overrides.thresholds
  }
})

export interface Started {
  readonly runner: ProjectionRunner
  readonly output: FakeOutput
}

/** Starts a runner in the current scope over the store, with a fresh fake output. */
export const start = (
  store: EventStoreService,
  spec: RunnerSpec,
  source: SourceReader,
  handler: ProjectionHandler,
  output: FakeOutput = fakeOutput()
): Effect.Effect<Started, never, Scope.Scope> =>
  Effect.gen(function* () {
    const runner = yield* startProjectionRunner(spec, {
      store,
      writer: store,
      source,
      handler,
      output: (writerSpec) =>
        Effect.sync(() => {
          output.spec = writerSpec
          return output
        })
    })
    yield* settle()
    return { runner, output }
  })

/** The data and metadata text of every event of a stream, oldest first. */
export const streamEvents = (store: EventStoreService, stream: string) =>
  Effect.map(Effect.orDie(store.readStreamForward(stream, 0, 1000)), (read) =>
    read._tag === "Success"
      ? read.events.map((resolved) => {
          const record = originalEvent(resolved)
          return {
            type: record.eventType,
            data: record.data.toString("utf8"),
            metadata: record.metadata.toString("utf8")
          }
        })
      : []
  )
