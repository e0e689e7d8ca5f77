/**
 * The checks after one scavenge of a random workload, against the reference model: the log before the
 * point is exactly what the model keeps; the index finds what the model keeps and nothing it drops; each
 * stream keeps its last event; stream reads unchanged; `$all` loses exactly the removed positions.
 */
import { expect } from "vitest"
import { Effect } from "effect"
import { DeletedStreamNumber, RecordKind, type EventRecord, type LogRecord, type StorageConfig } from "@vellum/storage"
import { executeWithThreshold, indexKey, scavengeModel, type ModelInput, type ModelState } from "./model/index.js"
import { allPositions, logRecords, streamView, type Node } from "./scavenger-support.js"
import { LINKS, STREAMS } from "./scavenger-workload.js"

export const isEvent = (r: LogRecord): r is EventRecord => r.kind === RecordKind.Event
export const sorted = (xs: Iterable<number>) => [...xs].sort((a, b) => a - b)

/** A scavenge history stream: a run appends to these itself, so reads of them change across it. */
export const isHistory = (name: string) => /^(\$\$)*\$scavenge/.test(name)

/** Every stream name the log has events of (but the history), plus the metastreams of the workload's streams. */
export const streamNames = (records: ReadonlyArray<LogRecord>) =>
  [...new Set([...STREAMS, LINKS, ...STREAMS.map((s) => `$$${s}`), ...records.filter(isEvent).map((r) => r.stream)])]
    .filter((s) => !isHistory(s))
    .sort()

/** What reads and `$all` show, to compare before and after a run. */
export const observe = (node: Node, names: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const reads = new Map<string, unknown>()
    for (const s of names) reads.set(s, yield* streamView(node.store, s))
    return { reads, all: yield* allPositions(node.store) }
  })

export interface RunCheck {
  readonly node: Node
  readonly config: StorageConfig
  readonly written: ReadonlyArray<LogRecord>
  readonly before: {
    readonly reads: ReadonlyMap<string, unknown>
    readonly all: ReadonlyArray<number>
    readonly positions: ReadonlySet<number>
  }
  readonly prior: ModelState | undefined
  readonly unsafeIgnoreHardDeletes: boolean
}

/** The checks after one run; answers the model state to carry to the next run. */
export const checkRun = ({ node, config, written, before, prior, unsafeIgnoreHardDeletes }: RunCheck) =>
  Effect.gen(function* () {
    const { store } = node
    const sps = written.filter((r) => r.kind === RecordKind.ScavengePoint)
    const spRecord = sps[sps.length - 1]
    if (spRecord === undefined || spRecord.kind !== RecordKind.ScavengePoint)
      throw new Error("no scavenge point written")
    const sp = {
      position: spRecord.logPosition,
      effectiveNowMicros: spRecord.effectiveNowMicros,
      threshold: spRecord.threshold
    }
    const input: ModelInput = {
      records: written,
      chunkSize: config.chunkSize,
      scavengePoint: sp,
      ...(prior === undefined ? {} : { prior }),
      unsafeIgnoreHardDeletes
    }
    const model = scavengeModel(input)
    const run = executeWithThreshold(input, model)
    if (sp.threshold < 0) expect(sorted(run.keptInLog)).toEqual(sorted(model.keptInLog))

    const now = new Map((yield* logRecords(store)).map((r) => [r.logPosition, r]))
    // 1. The log before the point is what the model keeps (every record kind).
    const realBefore = sorted([...now.keys()].filter((p) => p < sp.position))
    expect(realBefore, "records left before the scavenge point").toEqual(
      sorted([...run.keptInLog].filter((p) => p < sp.position))
    )

    // 3. Nothing at or after the point changed; non-event records all survive.
    for (const r of written) {
      if (r.logPosition >= sp.position || !isEvent(r))
        expect(now.get(r.logPosition), `record at ${r.logPosition}`).toEqual(r)
    }
    // 3. Each stream keeps its last event before the point (a tombstoned stream's is its tombstone; its
    //    metastream goes entirely); with every chunk executed (threshold -1), removals are a prefix, except
    //    holes below the maybe-discard point (a chunk skipped for its weight leaves holes of its own).
    const byStream = new Map<string, Array<EventRecord>>()
    for (const r of written)
      if (isEvent(r) && r.logPosition < sp.position) byStream.set(r.stream, [...(byStream.get(r.stream) ?? []), r])
    const tombstoned = new Set(
      written
        .filter((r) => isEvent(r) && r.eventNumber === DeletedStreamNumber && r.logPosition < sp.position)
        .map((r) => (r as EventRecord).stream)
    )
    for (const [name, events] of byStream) {
      const last = events.reduce((a, b) => (b.eventNumber > a.eventNumber ? b : a))
      const metaOfTombstoned = name.startsWith("$$") && tombstoned.has(name.slice(2))
      // With UnsafeIgnoreHardDelete a hard-deleted stream goes entirely, its tombstone included.
      if (!metaOfTombstoned && !(unsafeIgnoreHardDeletes && tombstoned.has(name)))
        expect(now.has(last.logPosition), `last event ${name}@${last.eventNumber} survives`).toBe(true)
      const kept = events.filter((e) => now.has(e.logPosition)).map((e) => e.eventNumber)
      const firstKept = Math.min(...kept)
      const maybe = run.state.originals.get(name)?.maybeDiscardPoint ?? 0
      for (const e of events) {
        if (sp.threshold < 0 && !now.has(e.logPosition) && e.eventNumber > firstKept)
          expect(e.eventNumber, `hole ${name}@${e.eventNumber} inside the maybe range`).toBeLessThan(maybe)
      }
    }

    // 2. The index: kept entries are found when their record is still there; dropped ones never are.
    for (const r of written) {
      if (!isEvent(r)) continue
      const found = yield* store.engine.readIndex.eventAt(r.stream, r.eventNumber)
      const inIndex = model.keptInIndex.has(indexKey(r.stream, r.eventNumber))
      if (inIndex && now.has(r.logPosition))
        expect(found?.logPosition, `index finds ${r.stream}@${r.eventNumber}`).toBe(r.logPosition)
      if (!inIndex) expect(found, `index drops ${r.stream}@${r.eventNumber}`).toBeUndefined()
      if (!config.streamHash) {
        // With a real hash the raw entries are the stream's own: maybe-expired entries stay, dropped
        // ones are gone from the tables (the memtable is not scavenged).
        const raw = yield* store.engine.index.range(r.stream, r.eventNumber, r.eventNumber)
        const entry = raw.find((e) => e.position === r.logPosition)
        if (inIndex) expect(entry, `raw index keeps ${r.stream}@${r.eventNumber}`).toBeDefined()
        else if (entry !== undefined) expect(entry.exact, `raw index drops ${r.stream}@${r.eventNumber}`).toBe(true)
      }
    }

    // 3. Stream reads are what they were; 4. `$all` lost exactly the removed positions.
    // (Without its tombstone, an unsafely scavenged hard-deleted stream no longer reads as deleted.)
    const compared = [...before.reads.keys()].filter(
      (s) => !(unsafeIgnoreHardDeletes && tombstoned.has(s.replace(/^\$\$/, "")))
    )
    const after = yield* observe(node, compared)
    expect(after.reads, "stream reads").toEqual(new Map(compared.map((s) => [s, before.reads.get(s)])))
    const removed = new Set([...before.positions].filter((p) => !run.keptInLog.has(p)))
    const allBefore = new Set(before.all)
    expect(
      after.all.filter((p) => allBefore.has(p)),
      "$all"
    ).toEqual(before.all.filter((p) => !removed.has(p)))
    return { state: run.state, sp }
  })
