// Sources are deterministic: over random logs (events of user and system streams, links, metadata, deletes,
// bad JSON) a source read in random batch sizes gives exactly what one big read gives, and a fromStreams
// merge is `$all` filtered to those streams.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { EventFlags, ExpectedVersion, type EventRecord, type EventStoreService } from "@vellum/storage"
import { makeSourceReader, type SourceDefinition, type SourceReaderOptions } from "../src/index.js"
import { definition, fromAll, itemKey, openStore, readToEnd, storageConfig } from "./sourcesSupport.js"

type Content = "valid" | "empty" | "invalid" | "text"

type Op =
  | { readonly op: "append"; readonly stream: string; readonly type: string; readonly content: Content }
  | { readonly op: "link"; readonly stream: string; readonly target: number; readonly metadata: string }
  | { readonly op: "metadata"; readonly stream: string }
  | { readonly op: "softDelete" | "hardDelete"; readonly stream: string }

const contentArb = fc.constantFrom<Content>("valid", "valid", "empty", "invalid", "text")
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant("append" as const),
      stream: fc.constantFrom("a", "b", "c", "d", "$sys"),
      type: fc.constantFrom("t1", "t2"),
      content: contentArb
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("link" as const),
      stream: fc.constantFrom("a", "b", "$ce-k", "e"),
      target: fc.nat(),
      metadata: fc.constantFrom("", `{"$o":"o-1"}`, "not json")
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("link" as const),
      stream: fc.constant("$ce-k"),
      target: fc.nat(),
      metadata: fc.constantFrom(`{"$o":"d","$deleted":-1}`, `{"$deleted":-1}`)
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("metadata" as const), stream: fc.constantFrom("a", "d", "$sys") })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constantFrom("softDelete" as const, "hardDelete" as const),
      stream: fc.constant("d")
    })
  }
)

const dataOf = (content: Content): { data: string; isJson: boolean } =>
  content === "valid"
    ? { data: `{"v":1}`, isJson: true }
    : content === "empty"
      ? { data: "", isJson: true }
      : content === "invalid"
        ? { data: "{oops", isJson: true }
        : { data: "plain text", isJson: false }

let ids = 0
const id = () => `10000000-0000-4000-8000-${String(++ids).padStart(12, "0")}`

/** Writes the ops; a write the store refuses (a deleted stream) is just not there. */
const writeLog = (store: EventStoreService, ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const written: Array<string> = []
    for (const op of ops) {
      if (op.op === "append") {
        const { data, isJson } = dataOf(op.content)
        const result = yield* Effect.either(
          store.append(op.stream, ExpectedVersion.Any, [
            { eventId: id(), eventType: op.type, isJson, data: Buffer.from(data), metadata: Buffer.alloc(0) }
          ])
        )
        if (result._tag === "Right") written.push(`${result.right.firstEventNumber}@${op.stream}`)
      } else if (op.op === "link") {
        const target = written.length === 0 ? "0@nowhere" : written[op.target % written.length]!
        const event = { eventId: id(), eventType: "$>", isJson: false, data: Buffer.from(target) }
        yield* Effect.either(
          store.append(op.stream, ExpectedVersion.Any, [{ ...event, metadata: Buffer.from(op.metadata) }])
        )
      } else if (op.op === "metadata") {
        yield* Effect.either(store.setStreamMetadata(op.stream, ExpectedVersion.Any, Buffer.from(`{"n":1}`)))
      } else {
        yield* Effect.either(store.deleteStream(op.stream, ExpectedVersion.Any, op.op === "hardDelete"))
      }
    }
  })

const sources: ReadonlyArray<readonly [string, SourceDefinition, SourceReaderOptions]> = [
  ["fromAll", fromAll(), { validateContent: true, deletions: false }],
  ["fromAll with links", fromAll({}, { includeLinks: true }), { validateContent: true, deletions: false }],
  ["fromAll by type", fromAll({ allEvents: false, events: ["t1"] }), { validateContent: true, deletions: false }],
  ["fromAll deletions", fromAll({ byStream: true }), { validateContent: true, deletions: true }],
  ["fromAll unvalidated", fromAll(), { validateContent: false, deletions: false }],
  ["fromStream", definition({ streams: ["a"] }), { validateContent: true, deletions: false }],
  ["fromStreams", definition({ streams: ["a", "b", "c"] }), { validateContent: true, deletions: false }],
  ["fromCategory", definition({ categories: ["k"], byStream: true }), { validateContent: true, deletions: true }]
]

const isValidContent = (record: EventRecord): boolean => {
  if ((record.flags & EventFlags.Json) === 0) return true
  try {
    return record.data.length > 0 && (JSON.parse(record.data.toString("utf8")), true)
  } catch {
    return false
  }
}

/** The `$all` records of `streams` a projection would see: valid events, links to readable valid targets. */
const expectedMerge = (store: EventStoreService, streams: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const records: Array<EventRecord> = []
    for (let from = 0, end = false; !end;) {
      const page = yield* Effect.orDie(store.readAllForward(from, store.config.maxReadCount))
      for (const { event } of page.events) records.push(event!)
      from = page.nextPosition
      end = page.isEnd
    }
    const positions: Array<number> = []
    for (const event of records) {
      if (event === undefined || !streams.has(event.stream)) continue
      if (event.eventType !== "$>") {
        if (isValidContent(event)) positions.push(event.logPosition)
        continue
      }
      const [number, target] = event.data.toString("utf8").split("@") as [string, string]
      const read = yield* Effect.orDie(store.readEvent(target, Number(number)))
      if (read._tag === "Success" && read.event.event !== undefined && isValidContent(read.event.event))
        positions.push(event.logPosition)
    }
    return positions
  })

const run = <A>(effect: Effect.Effect<A, never, import("effect").Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(effect))

describe("sources, property", () => {
  it("give the same items whatever the batch sizes, and a merge equal to $all filtered", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 2, max: 6 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 8 }),
        (ops, maxReadCount, sizes) =>
          run(
            Effect.gen(function* () {
              const store = yield* openStore({ ...storageConfig, maxReadCount })
              yield* writeLog(store, ops)
              for (const [name, source, options] of sources) {
                const reader = makeSourceReader(store, source, options)
                const whole = yield* readToEnd(reader, 1000)
                const pieces = yield* readInPieces(reader, sizes)
                expect(pieces.items.map(itemKey), name).toEqual(whole.items.map(itemKey))
                expect(pieces.next, name).toEqual(whole.next)
              }
              const merge = makeSourceReader(store, definition({ streams: ["a", "b", "c"] }), {
                validateContent: true,
                deletions: false
              })
              const merged = yield* readInPieces(merge, sizes)
              const expected = yield* expectedMerge(store, new Set(["a", "b", "c"]))
              expect(merged.items.map((item) => item.logPosition)).toEqual(expected)
            })
          )
      ),
      { numRuns: 60 }
    )
  })
})

/** Reads to the end with batch sizes taken in turn from `sizes`. */
const readInPieces = (reader: ReturnType<typeof makeSourceReader>, sizes: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const items = []
    let tag = reader.startTag
    for (let i = 0; ; i++) {
      const batch = yield* Effect.orDie(reader.read(tag, sizes[i % sizes.length]!))
      items.push(...batch.items)
      tag = batch.next
      if (batch.atEnd) return { items, next: tag }
    }
  })
