import { Effect, Either } from "effect"
import { EventFlags, RecordKind, type EventRecord } from "@vellum/storage"
import type { HandlerFault, HandlerItem, HandlerOutcome, ProjectionHandler } from "../src/engine/ProjectionHandler.js"
import { loadScriptProjection, type ScriptProjection, type ScriptProjectionOptions } from "../src/execution/index.js"
import type { SourceItem } from "../src/sources/SourceReader.js"

export const defaultOptions: ScriptProjectionOptions = { compilationTimeoutMillis: 500, executionTimeoutMillis: 250 }

let nextPosition = 1000

export interface RecordOptions {
  readonly isJson?: boolean
  readonly metadata?: string
  readonly eventId?: string
  readonly createdMicros?: number
  readonly logPosition?: number
}

/** An event record; `data` is JSON text for a JSON event (an object is stringified), raw text otherwise. */
export const aRecord = (
  stream: string,
  eventNumber: number,
  eventType: string,
  data: string | object = {},
  options: RecordOptions = {}
): EventRecord => ({
  kind: RecordKind.Event,
  logPosition: options.logPosition ?? (nextPosition += 100),
  flags: options.isJson === false ? 0 : EventFlags.Json,
  eventNumber,
  createdMicros: options.createdMicros ?? 1_700_000_000_123_456,
  eventId: options.eventId ?? `00000000-0000-4000-8000-${String(eventNumber).padStart(12, "0")}`,
  stream,
  eventType,
  data: Buffer.from(typeof data === "string" ? data : JSON.stringify(data), "utf8"),
  metadata: Buffer.from(options.metadata ?? "", "utf8")
})

export interface ItemOptions {
  readonly link?: EventRecord
  readonly category?: string | null
  readonly kind?: "event" | "deleted"
  readonly partitionStream?: string
}

export const anItem = (event: EventRecord, options: ItemOptions = {}): SourceItem => ({
  kind: options.kind ?? "event",
  event,
  link: options.link,
  tag: { kind: "position", phase: 0, commit: event.logPosition, prepare: event.logPosition },
  logPosition: options.link?.logPosition ?? event.logPosition,
  category: options.category ?? null,
  partitionStream: options.partitionStream ?? event.stream
})

/** An event item of a JSON event. */
export const anEvent = (
  stream: string,
  eventNumber: number,
  eventType: string,
  data: string | object = {},
  options: RecordOptions & ItemOptions = {}
): SourceItem => anItem(aRecord(stream, eventNumber, eventType, data, options), options)

/** Runs `body` with the projection loaded from `query`; the sandbox is freed afterwards. */
export const withProjection = <A, E>(
  query: string,
  body: (projection: ScriptProjection) => Effect.Effect<A, E>,
  options: ScriptProjectionOptions = defaultOptions
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        Effect.orDieWith(loadScriptProjection("p", query, options), (e) => `${e._tag}: ${e.message}`),
        body
      )
    )
  )

/** Why `query` cannot be loaded. */
export const loadFaultOf = (query: string, options: ScriptProjectionOptions = defaultOptions) =>
  Effect.runPromise(Effect.scoped(Effect.flip(loadScriptProjection("p", query, options))))

/** Items of one partition: the first with state "" (a new partition), the rest going on with the live state. */
export const fresh = (items: ReadonlyArray<SourceItem>, partition = "", extra: Partial<HandlerItem> = {}) =>
  items.map((source, i): HandlerItem => (i === 0 ? { source, partition, state: "", ...extra } : { source, partition }))

export const outcomesOf = (handler: ProjectionHandler, items: ReadonlyArray<HandlerItem>) =>
  Effect.orDieWith(handler.process(items), (f) => `unexpected fault at ${f.index}: ${f.message}`)

export const faultOf = (handler: ProjectionHandler, items: ReadonlyArray<HandlerItem>): Effect.Effect<HandlerFault> =>
  Effect.flatMap(Effect.either(handler.process(items)), (r) =>
    Either.isLeft(r) ? Effect.succeed(r.left) : Effect.dieMessage(`expected a fault, got ${JSON.stringify(r.right)}`)
  )

/** Runs `query` over items of the root partition (a fresh one) and gives the outcomes. */
export const run = (
  query: string,
  items: ReadonlyArray<SourceItem>,
  options?: ScriptProjectionOptions
): Promise<ReadonlyArray<HandlerOutcome>> =>
  withProjection(query, ({ handler }) => outcomesOf(handler, fresh(items)), options)

/** The states after each item. */
export const statesOf = async (query: string, items: ReadonlyArray<SourceItem>): Promise<Array<string>> =>
  (await run(query, items)).map((o) => o.state)

/** The fault `query` gives over `items` (a fresh root partition). */
export const runFault = (query: string, items: ReadonlyArray<SourceItem>, options?: ScriptProjectionOptions) =>
  withProjection(query, ({ handler }) => faultOf(handler, fresh(items)), options)
