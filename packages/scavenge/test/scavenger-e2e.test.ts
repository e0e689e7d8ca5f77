/**
 * The scavenger end to end on a real store (4 KiB chunks, so a few hundred events span many chunks): what
 * stream reads and `$all` show afterwards, the history it writes, and agreement with the reference model
 * on which records stay in the log.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryDisk, transformReads, type DiskService } from "@vellum/platform"
import { ExpectedVersion, RecordKind, type LogRecord } from "@vellum/storage"
import { scavengeModel } from "./model/index.js"
import {
  closeNode,
  copyDisk,
  eventNumbers,
  eventPositions,
  evs,
  json,
  logRecords,
  openNode,
  scavenge,
  storageConfig,
  type Node
} from "./scavenger-support.js"

/** A mix of every kind of removable history, each stream spread over several chunks. */
const writeWorkload = (node: Node) =>
  Effect.gen(function* () {
    const { store } = node
    for (let round = 0; round < 4; round++) {
      yield* store.append("capped", ExpectedVersion.Any, evs(5))
      yield* store.append("hard", ExpectedVersion.Any, evs(3))
      yield* store.append("soft", ExpectedVersion.Any, evs(3))
      yield* store.append("plain", ExpectedVersion.Any, evs(3))
      yield* store.append("truncated", ExpectedVersion.Any, evs(3))
    }
    yield* store.setStreamMetadata("capped", ExpectedVersion.Any, json({ $maxCount: 3 }))
    yield* store.setStreamMetadata("capped", ExpectedVersion.Any, json({ $maxCount: 2 }))
    yield* store.setStreamMetadata("truncated", ExpectedVersion.Any, json({ $tb: 7 }))
    yield* store.deleteStream("hard", ExpectedVersion.Any, true)
    yield* store.deleteStream("soft", ExpectedVersion.Any, false)
  })

const scavengePointOf = (records: ReadonlyArray<LogRecord>) => {
  const sps = records.filter((r) => r.kind === RecordKind.ScavengePoint)
  const sp = sps[sps.length - 1]
  if (sp === undefined || sp.kind !== RecordKind.ScavengePoint) throw new Error("no scavenge point in the log")
  return { position: sp.logPosition, effectiveNowMicros: sp.effectiveNowMicros, threshold: sp.threshold }
}

describe("scavenging a store end to end", () => {
  it.effect("removes what stream reads hide, keeps last events and tombstones, and agrees with the model", () =>
    Effect.gen(function* () {
      const node = yield* openNode(new MemoryDisk(), storageConfig())
      yield* writeWorkload(node)
      const before = yield* logRecords(node.store)
      expect(yield* eventNumbers(node.store, "capped")).toEqual([18, 19])

      const run = yield* scavenge(node, { threshold: -1 })
      expect(run.result).toBe("Success")

      const after = yield* logRecords(node.store)
      const sp = scavengePointOf(after)
      // The log as written: what was there before the run, then what the run appended (history, the SP).
      const beforeEnd = before.length === 0 ? 0 : before[before.length - 1]!.logPosition + 1
      const written = [...before, ...after.filter((r) => r.logPosition >= beforeEnd)]
      const model = scavengeModel({ records: written, chunkSize: 4096, scavengePoint: sp })
      const modelKept = new Set(
        [...model.keptInLog].filter((p) =>
          written.some((r) => r.logPosition === p && r.kind === RecordKind.Event && p < sp.position)
        )
      )
      expect([...eventPositions(after, sp.position)].sort((a, b) => a - b)).toEqual(
        [...modelKept].sort((a, b) => a - b)
      )

      // Stream reads are unchanged by the scavenge.
      expect(yield* eventNumbers(node.store, "capped")).toEqual([18, 19])
      expect(yield* eventNumbers(node.store, "plain")).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
      expect(yield* eventNumbers(node.store, "truncated")).toEqual([7, 8, 9, 10, 11])
      expect(yield* eventNumbers(node.store, "hard")).toBe("StreamDeleted")
      // What stays in the log: only capped's last two, the tombstone, soft's last event, truncated from 7.
      const streamsLeft = (stream: string) =>
        after
          .filter((r) => r.kind === RecordKind.Event && r.stream === stream && r.logPosition < sp.position)
          .map((r) => (r.kind === RecordKind.Event ? r.eventNumber : -1))
      expect(streamsLeft("capped")).toEqual([18, 19])
      expect(streamsLeft("hard")).toEqual([Number.MAX_SAFE_INTEGER])
      expect(streamsLeft("soft")).toEqual([11])
      expect(streamsLeft("truncated")).toEqual([7, 8, 9, 10, 11])
      expect(streamsLeft("plain")).toHaveLength(12)
      expect(streamsLeft("$$capped")).toHaveLength(1)
      expect(streamsLeft("$$hard")).toHaveLength(0)

      // History: a started and a completed event linked from $scavenges, chunk events in the run's stream.
      const history = yield* node.store.readStreamForward(`$scavenges-${run.scavengeId}`, 0, 4096)
      const types = history._tag === "Success" ? history.events.map((e) => e.event!.eventType) : []
      expect(types[0]).toBe("$scavengeStarted")
      expect(types[types.length - 1]).toBe("$scavengeCompleted")
      expect(types).toContain("$scavengeChunksCompleted")
      expect(yield* node.store.lastEventNumber("$scavenges")).toBe(1)
      yield* closeNode(node)
    })
  )

  it.effect("a second run to a new point finds nothing more to remove and changes no kept record", () =>
    Effect.gen(function* () {
      const node = yield* openNode(new MemoryDisk(), storageConfig())
      yield* writeWorkload(node)
      yield* scavenge(node, { threshold: -1 })
      const first = yield* logRecords(node.store)
      const firstSp = scavengePointOf(first)
      const run = yield* scavenge(node, { threshold: 0 })
      expect(run.result).toBe("Success")
      const second = yield* logRecords(node.store)
      expect([...eventPositions(second, firstSp.position)]).toEqual([...eventPositions(first, firstSp.position)])
      // No discard point moved, so no table is rewritten; every table is still reported, unchanged.
      const history = yield* node.store.readStreamForward(`$scavenges-${run.scavengeId}`, 0, 4096)
      const tables = (history._tag === "Success" ? history.events : [])
        .map((e) => e.event!)
        .filter((e) => e.eventType === "$scavengeIndexCompleted")
        .map((e) => JSON.parse(e.data.toString("utf8")))
      expect(tables.map((t) => [t.level, t.index])).toEqual(
        node.store.engine.index.tables().map((t) => [t.level, t.index])
      )
      expect(tables.length).toBeGreaterThan(0)
      for (const t of tables)
        expect(t).toMatchObject({ entriesDeleted: 0, spaceSaved: 0, wasScavenged: true, errorMessage: "" })
      yield* closeNode(node)
    })
  )

  it.effect("syncOnly with no point to reach does nothing and succeeds; a second start while one runs is refused", () =>
    Effect.gen(function* () {
      const node = yield* openNode(new MemoryDisk(), storageConfig())
      yield* writeWorkload(node)
      const run = yield* scavenge(node, { syncOnly: true })
      expect(run.result).toBe("Success")
      expect(yield* node.store.lastEventNumber("$scavengePoints")).toBe(-1)
      const started = yield* node.scavenger.start({
        threads: 1,
        threshold: undefined,
        throttlePercent: 100,
        syncOnly: false,
        startFromChunk: 0
      })
      const refused = yield* Effect.flip(
        node.scavenger.start({
          threads: 1,
          threshold: undefined,
          throttlePercent: 100,
          syncOnly: false,
          startFromChunk: 0
        })
      )
      expect(refused._tag).toBe("ScavengeAlreadyRunning")
      const notFound = yield* Effect.flip(node.scavenger.stop("00000000-0000-4000-8000-000000000000"))
      expect(notFound._tag).toBe("ScavengeNotFound")
      // Stopping "current" answers with the run's id once it has stopped (or finished).
      expect((yield* node.scavenger.stop("current")).scavengeId).toBe(started.scavengeId)
      expect(yield* node.scavenger.current).toBeUndefined()
      expect(["Stopped", "Success"]).toContain((yield* node.scavenger.last).result)
      yield* closeNode(node)
    })
  )

  it.effect(
    "a chunk read damaged on its way from the disk is read again: accumulation and execution end as an undamaged run",
    () =>
      Effect.gen(function* () {
        const clean = yield* openNode(new MemoryDisk(), storageConfig())
        yield* writeWorkload(clean)
        const mem = yield* copyDisk(clean.mem)
        expect((yield* scavenge(clean, { threshold: -1 })).result).toBe("Success")
        const expected = yield* logRecords(clean.store)
        yield* closeNode(clean)

        // Whole-chunk scans start at the first record (offset 128): every other such read of a chunk file comes
        // back with one bit flipped, so the first pass over each chunk fails its file checksum and the second
        // is clean — in accumulation and again in execution.
        const damaged = { reads: 0, flips: 0 }
        const flipping = (inner: DiskService): DiskService => ({
          ...inner,
          open: (path, options) =>
            Effect.map(inner.open(path, options), (handle) =>
              transformReads(handle, (position, bytes) => {
                if (!path.includes("/chunk-") || position !== 128 || bytes.length < 512 || damaged.reads++ % 2 === 1)
                  return bytes
                damaged.flips++
                const copy = Buffer.from(bytes)
                copy[bytes.length >> 1] ^= 0x04
                return copy
              })
            )
        })
        const node = yield* openNode(mem, storageConfig(), { disk: flipping })
        expect((yield* scavenge(node, { threshold: -1 })).result).toBe("Success")
        const got = yield* logRecords(node.store)
        // The same events kept at the same positions (the reopened node adds an epoch, and the history streams
        // are named after each run's id).
        const shape = (records: ReadonlyArray<LogRecord>) =>
          records.flatMap((r) =>
            r.kind === RecordKind.Event && !r.stream.includes("$scavenges")
              ? [`${r.logPosition}:${r.stream}/${r.eventNumber}`]
              : []
          )
        expect(shape(got)).toEqual(shape(expected))
        // Two chunks to accumulate: a third flip happened in execution.
        expect(damaged.flips).toBeGreaterThanOrEqual(3)
        yield* closeNode(node)
      })
  )
})
