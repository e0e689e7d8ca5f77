/**
 * The invariants the scavenger must keep, checked on the model itself over random logs and runs, so the
 * oracle the real scavenger is compared with is itself sound.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { isMetastream, RecordKind, type EventRecord } from "@vellum/storage"
import { indexKey, LogBuilder, scavengeModel, type ModelState } from "./model/index.js"

const CHUNK = 2048
const DAY = 86_400_000_000
const NOW = Date.UTC(2022, 0, 5) * 1000
const STREAMS = ["a", "b", "c"] as const

type Command =
  | { readonly _tag: "append"; readonly stream: number; readonly count: number; readonly ageDays: number }
  | { readonly _tag: "metadata"; readonly stream: number; readonly body: unknown }
  | { readonly _tag: "tombstone"; readonly stream: number }
  | { readonly _tag: "completeChunk" }
  | { readonly _tag: "scavenge"; readonly unsafe: boolean }

const stream = fc.integer({ min: 0, max: STREAMS.length - 1 })
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      _tag: fc.constant("append" as const),
      stream,
      count: fc.integer({ min: 1, max: 4 }),
      ageDays: fc.integer({ min: 0, max: 4 })
    }),
    weight: 6
  },
  {
    arbitrary: fc.record({
      _tag: fc.constant("metadata" as const),
      stream,
      body: fc.oneof(
        fc.record({ $maxCount: fc.integer({ min: -1, max: 3 }) }),
        fc.record({ $maxAge: fc.constantFrom(86_400, 2 * 86_400, 3 * 86_400) }),
        fc.record({ $tb: fc.integer({ min: 0, max: 6 }) }),
        fc.constant("not json")
      )
    }),
    weight: 2
  },
  { arbitrary: fc.record({ _tag: fc.constant("tombstone" as const), stream }), weight: 1 },
  { arbitrary: fc.constant({ _tag: "completeChunk" as const }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("scavenge" as const), unsafe: fc.boolean() }), weight: 2 }
)

describe("scavenge model invariants", () => {
  it("hold on random logs over several runs", () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 40 }), (commands) => {
        const log = new LogBuilder({ chunkSize: CHUNK, startMicros: NOW })
        const tombstoned = new Set<string>()
        let prior: ModelState | undefined
        let now = NOW
        let anyUnsafe = false
        for (const c of [...commands, { _tag: "scavenge", unsafe: false } as const]) {
          if (c._tag === "append" && !tombstoned.has(STREAMS[c.stream]))
            log.append(STREAMS[c.stream], c.count, { createdMicros: now - c.ageDays * DAY })
          else if (c._tag === "metadata" && !tombstoned.has(STREAMS[c.stream])) log.metadata(STREAMS[c.stream], c.body)
          else if (c._tag === "tombstone" && !tombstoned.has(STREAMS[c.stream])) {
            tombstoned.add(STREAMS[c.stream])
            log.tombstone(STREAMS[c.stream])
          } else if (c._tag === "completeChunk") log.completeChunk()
          else if (c._tag === "scavenge") {
            now += DAY
            anyUnsafe ||= c.unsafe
            const sp = log.scavengePoint({ effectiveNowMicros: now, timeMicros: now })
            log.append("after", 1, { createdMicros: now }) // a record past the SP
            const input = {
              records: [...log.records],
              chunkSize: CHUNK,
              scavengePoint: sp,
              prior,
              unsafeIgnoreHardDeletes: c.unsafe
            }
            const out = scavengeModel(input)
            const events = log.records.filter((r): r is EventRecord => r.kind === RecordKind.Event)
            for (const r of log.records) {
              // Nothing at or after the SP changes; non-event records always survive.
              if (r.logPosition >= sp.position || r.kind !== RecordKind.Event)
                expect(out.keptInLog.has(r.logPosition)).toBe(true)
            }
            for (const name of STREAMS) {
              const before = events.filter((e) => e.stream === name && e.logPosition < sp.position)
              const last = Math.max(-1, ...before.map((e) => e.eventNumber))
              const lastRecord = before.find((e) => e.eventNumber === last)
              // Keep-last-event, unless hard-deleted and some run had the unsafe option.
              if (lastRecord !== undefined && !(anyUnsafe && tombstoned.has(name)))
                expect(out.keptInLog.has(lastRecord.logPosition)).toBe(true)
              // Index removals are a prefix of the stream.
              const removed = before
                .filter((e) => !out.keptInIndex.has(indexKey(name, e.eventNumber)))
                .map((e) => e.eventNumber)
              const kept = before
                .filter((e) => out.keptInIndex.has(indexKey(name, e.eventNumber)))
                .map((e) => e.eventNumber)
              if (removed.length > 0 && kept.length > 0) expect(Math.max(...removed)).toBeLessThan(Math.min(...kept))
              // Discard points never decrease.
              const old = prior?.originals.get(name)
              const current = out.state.originals.get(name)
              if (old !== undefined) {
                expect(current!.discardPoint).toBeGreaterThanOrEqual(old.discardPoint)
                expect(current!.maybeDiscardPoint).toBeGreaterThanOrEqual(old.maybeDiscardPoint)
              }
            }
            // Removal is permanent, and a metastream keeps at most its latest record.
            for (const position of prior?.removedFromLog ?? []) expect(out.keptInLog.has(position)).toBe(false)
            for (const e of events)
              if (isMetastream(e.stream) && e.logPosition < sp.position && out.keptInLog.has(e.logPosition)) {
                expect(
                  events.some(
                    (o) => o.stream === e.stream && o.logPosition < sp.position && o.eventNumber > e.eventNumber
                  )
                ).toBe(false)
              }
            // The same SP again changes nothing.
            const again = scavengeModel({ ...input, prior: out.state })
            expect(again.keptInLog).toEqual(out.keptInLog)
            expect(again.keptInIndex).toEqual(out.keptInIndex)
            prior = out.state
          }
        }
      }),
      { numRuns: 200 }
    )
  })
})
