/**
 * Stop and resume at every checkpoint, and a crash after every checkpoint, give the same log as a run that
 * was never interrupted; two copies of one log scavenged to the same point give byte-identical chunks.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Effect } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import {
  ExpectedVersion,
  RecordKind,
  type EventStoreService,
  type LogRecord,
  type ProposedEvent
} from "@vellum/storage"
import {
  closeNode,
  copyDisk,
  eventNumbers,
  json,
  uuid,
  logRecords,
  openNode,
  scavenge,
  stopAfterCommit,
  storageConfig,
  type Node
} from "./scavenger-support.js"

const config = storageConfig()
const streams = ["s0", "s1", "s2", "s3", "s4", "s5"]

/** Events with the same ids and sizes in every run of the workload, so positions line up across runs. */
const fixedEvents = (from: number, count: number): Array<ProposedEvent> =>
  Array.from({ length: count }, (_, i) => ({
    eventId: uuid(from + i),
    eventType: "T",
    isJson: true,
    data: json({ n: String(from + i).padStart(6, "0") }),
    metadata: Buffer.alloc(0)
  }))

/** Rounds of four events to every stream, numbered from 1 in every run. */
const appendRounds = (store: EventStoreService, rounds: number) =>
  Effect.gen(function* () {
    let next = 1
    for (let round = 0; round < rounds; round++)
      for (const s of streams) {
        yield* store.append(s, ExpectedVersion.Any, fixedEvents(next, 4))
        next += 4
      }
  })

/** Every rule: limits by count and number, replaced metadata, a hard and a soft delete. */
const mixedWorkload = (store: EventStoreService) =>
  Effect.gen(function* () {
    yield* appendRounds(store, 3)
    yield* store.setStreamMetadata("s0", ExpectedVersion.Any, json({ $maxCount: 1 }))
    yield* store.setStreamMetadata("s1", ExpectedVersion.Any, json({ $tb: 9 }))
    yield* store.deleteStream("s2", ExpectedVersion.Any, true)
    yield* store.deleteStream("s3", ExpectedVersion.Any, false)
    yield* store.setStreamMetadata("s4", ExpectedVersion.Any, json({ $maxCount: 5 }))
    yield* store.setStreamMetadata("s4", ExpectedVersion.Any, json({ $maxCount: 3 }))
  })

/**
 * Metadata replaced first, then chunks of events that no rule removes (nothing has expired): only
 * accumulation moves a discard point (the replaced record's), and index execution must still drop its entry
 * when a stop came after that chunk was accumulated.
 */
const replacedMetadataWorkload = (store: EventStoreService) =>
  Effect.gen(function* () {
    yield* store.setStreamMetadata("s0", ExpectedVersion.Any, json({ $maxAge: 3600 }))
    yield* store.setStreamMetadata("s0", ExpectedVersion.Any, json({ $maxAge: 7200 }))
    yield* appendRounds(store, 3)
  })

const workloads = [
  ["a mixed workload", mixedWorkload],
  ["replaced metadata only", replacedMetadataWorkload]
] as const

/** What a scavenge decides: the events (stream, number) left in the log before the first scavenge point. */
const survivors = (records: ReadonlyArray<LogRecord>) => {
  const sp = records.find((r) => r.kind === RecordKind.ScavengePoint)
  const end = sp?.logPosition ?? Infinity
  return records
    .filter(
      (r) =>
        r.kind === RecordKind.Event &&
        r.logPosition < end &&
        !r.stream.startsWith("$scavenges") &&
        !r.stream.startsWith("$$$scavenges")
    )
    .map((r) => (r.kind === RecordKind.Event ? `${r.stream}@${r.eventNumber}@${r.logPosition}` : ""))
}

const reads = (node: Node) => Effect.forEach(streams, (s) => eventNumbers(node.store, s))

/** The raw index entries of every stream and metastream of the workload: what index execution left. */
const indexEntries = (node: Node) =>
  Effect.forEach([...streams, ...streams.map((s) => `$$${s}`)], (s) =>
    Effect.map(node.store.engine.index.range(s, 0, Number.MAX_SAFE_INTEGER), (entries) =>
      entries.map((e) => `${s}@${e.eventNumber}@${e.position}`)
    )
  )

const uninterrupted = (writeWorkload: (store: EventStoreService) => Effect.Effect<void, unknown>) =>
  Effect.gen(function* () {
    const node = yield* openNode(new MemoryDisk(), config)
    yield* writeWorkload(node.store)
    const counter = { commits: 0 }
    yield* closeNode(node)
    // Count the commits of a whole run with a wrapper that never stops it.
    const counted = yield* openNode(node.mem, config, { wrap: stopAfterCommit(0, counter) })
    expect((yield* scavenge(counted, { threshold: -1 })).result).toBe("Success")
    const result = {
      survivors: survivors(yield* logRecords(counted.store)),
      reads: yield* reads(counted),
      index: yield* indexEntries(counted),
      commits: counter.commits
    }
    yield* closeNode(counted)
    return result
  })

describe.each(workloads)("stopping and resuming a scavenge of %s", (_, writeWorkload) => {
  it.effect("stopped after every checkpoint and resumed, the result equals an uninterrupted run", () =>
    Effect.gen(function* () {
      const expected = yield* uninterrupted(writeWorkload)
      expect(expected.commits).toBeGreaterThan(5)
      expect(expected.survivors.length).toBeGreaterThan(0)
      for (let k = 1; k < expected.commits; k++) {
        const mem = new MemoryDisk()
        const first = yield* openNode(mem, config, { wrap: stopAfterCommit(k, { commits: 0 }) })
        yield* writeWorkload(first.store)
        expect((yield* scavenge(first, { threshold: -1 })).result, `stop after commit ${k}`).toBe("Stopped")
        yield* closeNode(first)
        // The next run (a new request, threshold ignored) resumes the stopped one.
        const second = yield* openNode(mem, config)
        expect((yield* scavenge(second, { threshold: 5 })).result).toBe("Success")
        expect(yield* second.store.lastEventNumber("$scavengePoints"), "resumed to the same point, none written").toBe(
          0
        )
        expect(survivors(yield* logRecords(second.store)), `resumed after commit ${k}`).toEqual(expected.survivors)
        expect(yield* reads(second)).toEqual(expected.reads)
        expect(yield* indexEntries(second), `the index, resumed after commit ${k}`).toEqual(expected.index)
        yield* closeNode(second)
      }
    })
  )

  it.effect("the service names the stage a stopped run is in, and where it resumes after a restart", () =>
    Effect.gen(function* () {
      const expected = yield* uninterrupted(writeWorkload)
      const seen = new Set<string>()
      for (let k = 1; k < expected.commits; k++) {
        const mem = new MemoryDisk()
        const stages: Array<string> = []
        const counter = { commits: 0 }
        const first = yield* openNode(mem, config, {
          wrap: (state) =>
            stopAfterCommit(
              k,
              counter
            )({ ...state, commit: (c) => Effect.tap(state.commit(c), () => Effect.sync(() => stages.push(c.stage))) })
        })
        expect(yield* first.scavenger.checkpointStage, "before any run").toBeUndefined()
        yield* writeWorkload(first.store)
        expect((yield* scavenge(first, { threshold: -1 })).result).toBe("Stopped")
        expect(yield* first.scavenger.checkpointStage, `stopped after commit ${k}`).toBe(stages[k - 1])
        seen.add(stages[k - 1]!)
        yield* closeNode(first)
        const second = yield* openNode(mem, config)
        expect(yield* second.scavenger.checkpointStage, `reopened after commit ${k}`).toBe(stages[k - 1])
        expect((yield* scavenge(second)).result).toBe("Success")
        expect(yield* second.scavenger.checkpointStage).toBe("Done")
        yield* closeNode(second)
      }
      // Every phase commits at least once, so a stop lands in each.
      expect([...seen].sort()).toEqual(
        ["Accumulating", "Calculating", "Cleaning", "ExecutingChunks", "ExecutingIndex", "MergingChunks"].sort()
      )
    })
  )

  it.effect("a power loss after every checkpoint, then a restart and a new run, gives the same result", () =>
    Effect.gen(function* () {
      const expected = yield* uninterrupted(writeWorkload)
      for (let k = 1; k < expected.commits; k++) {
        const mem = new MemoryDisk()
        const first = yield* openNode(mem, config, { wrap: stopAfterCommit(k, { commits: 0 }) })
        yield* writeWorkload(first.store)
        yield* scavenge(first, { threshold: -1 })
        mem.crash(new Prng(k), "random")
        const second = yield* openNode(mem, config)
        expect((yield* scavenge(second)).result).toBe("Success")
        expect(survivors(yield* logRecords(second.store)), `crash after commit ${k}`).toEqual(expected.survivors)
        expect(yield* reads(second)).toEqual(expected.reads)
        expect(yield* indexEntries(second), `the index, crash after commit ${k}`).toEqual(expected.index)
        yield* closeNode(second)
      }
    })
  )
})

describe("scavenging two copies of one log", () => {
  /** A random workload: appends, metadata and deletes over a few streams. */
  const ops = fc.array(
    fc.record({
      stream: fc.constantFrom("s0", "s1", "s2", "s3"),
      kind: fc.constantFrom("append", "append", "append", "maxCount", "tb", "soft", "hard"),
      n: fc.integer({ min: 1, max: 6 })
    }),
    { minLength: 5, maxLength: 40 }
  )

  const apply = (store: EventStoreService, list: ReadonlyArray<{ stream: string; kind: string; n: number }>) =>
    Effect.gen(function* () {
      let next = 1
      for (const op of list) {
        const write =
          op.kind === "append"
            ? store.append(op.stream, ExpectedVersion.Any, fixedEvents(next, op.n))
            : op.kind === "maxCount"
              ? store.setStreamMetadata(op.stream, ExpectedVersion.Any, json({ $maxCount: op.n }))
              : op.kind === "tb"
                ? store.setStreamMetadata(op.stream, ExpectedVersion.Any, json({ $tb: op.n }))
                : store.deleteStream(op.stream, ExpectedVersion.Any, op.kind === "hard")
        next += op.n
        yield* Effect.ignore(write) // appends to a hard-deleted stream fail; that is part of the workload
      }
    })

  it.effect("to the same scavenge point gives byte-identical chunks before it (property)", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(ops, fc.constantFrom(-1, 0, 2), (list, threshold) =>
          Effect.runPromise(
            Effect.gen(function* () {
              const a = yield* openNode(new MemoryDisk(), config)
              yield* apply(a.store, list)
              const sp = yield* a.store.writeScavengePoint(1_000_000, threshold)
              yield* closeNode(a)
              const copy = yield* copyDisk(a.mem)
              const nodeA = yield* openNode(a.mem, config)
              const nodeB = yield* openNode(copy, config)
              expect((yield* scavenge(nodeA, { syncOnly: true })).result).toBe("Success")
              expect((yield* scavenge(nodeB, { syncOnly: true })).result).toBe("Success")
              const spChunk = Math.floor(sp.position / config.chunkSize)
              const chunkFiles = (mem: MemoryDisk) =>
                mem
                  .files()
                  .filter((f) => /\/chunk-\d+\.\d+$/.test(f))
                  .filter((f) => Number(/chunk-(\d+)/.exec(f)![1]) <= spChunk)
              expect(chunkFiles(a.mem)).toEqual(chunkFiles(copy))
              for (const f of chunkFiles(a.mem))
                expect(a.mem.readFileSync(f).equals(copy.readFileSync(f)), f).toBe(true)
              yield* closeNode(nodeA)
              yield* closeNode(nodeB)
            })
          )
        ),
        { numRuns: 12 }
      )
    )
  )
})
