import { describe, expect, it } from "vitest"
import { calculateStream, type StreamLimits } from "../src/rules/calculateStream.js"
import { discardsMetastreamEvent, discardsOriginalEvent, dropsOriginalEntry } from "../src/rules/discardRules.js"
import { planMerges } from "../src/rules/mergePlan.js"
import { restMillis } from "../src/Throttle.js"

const noLimits: StreamLimits = {
  isTombstoned: false,
  maxAgeSeconds: undefined,
  maxCount: undefined,
  truncateBefore: undefined
}
const DAY = 86_400_000_000
const NOW = 100 * DAY
// Positions 100 apart, chunks of 1000: event n at position n*100.
const entries = (numbers: ReadonlyArray<number>) => numbers.map((n) => ({ eventNumber: n, position: n * 100 }))
const context = (spPosition: number, ranges: Record<number, { minMicros: number; maxMicros: number }> = {}) => ({
  spPosition,
  effectiveNowMicros: NOW,
  timeRangeAt: (position: number) => ranges[Math.floor(position / 1000)]
})

describe("calculateStream", () => {
  it("$maxCount k discards events <= last - k and weighs each discard 2", () => {
    const r = calculateStream({ ...noLimits, maxCount: 1 }, entries([0, 1, 2]), 2, context(10_000))
    expect(r.discardPoint).toBe(2)
    expect(r.weights.reduce((s, w) => s + w.weight, 0)).toBe(4) // $maxCount:1 over 3 events → 4
  })

  it("keeps the last event even under a tombstone-free soft delete ($tb past the end)", () => {
    const r = calculateStream(
      { ...noLimits, truncateBefore: Number.MAX_SAFE_INTEGER },
      entries([0, 1, 2, 3]),
      3,
      context(10_000)
    )
    expect(r.discardPoint).toBe(3)
  })

  it("a tombstoned stream discards everything before its tombstone, which is kept", () => {
    const withTombstone = [...entries([0, 1, 2]), { eventNumber: Number.MAX_SAFE_INTEGER, position: 300 }]
    const r = calculateStream(
      { ...noLimits, isTombstoned: true },
      withTombstone,
      Number.MAX_SAFE_INTEGER,
      context(10_000)
    )
    expect(r.discardPoint).toBe(3)
  })

  it("the last event before the scavenge point counts as last: later events are out of this run", () => {
    // Events 0..9 before the SP at 1000, event 10 after it; $maxCount 1 keeps 9 in this run.
    const r = calculateStream(
      { ...noLimits, maxCount: 1 },
      entries([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
      9,
      context(1000)
    )
    expect(r.discardPoint).toBe(9)
  })

  it("$maxAge: whole-expired chunks discard, mixed chunks maybe-discard (weight 1), fresh chunks stop", () => {
    const cutoff = NOW - 2 * DAY
    const ranges = {
      0: { minMicros: cutoff - 5, maxMicros: cutoff - 1 }, // all older than the cutoff
      1: { minMicros: cutoff - 5, maxMicros: cutoff + 5 }, // mixed
      2: { minMicros: cutoff, maxMicros: cutoff + 9 } // fresh (min at the cutoff is kept)
    }
    const r = calculateStream(
      { ...noLimits, maxAgeSeconds: 2 * 86_400 },
      entries([5, 15, 25, 26]),
      26,
      context(10_000, ranges)
    )
    expect(r.discardPoint).toBe(6)
    expect(r.maybeDiscardPoint).toBe(16)
    expect(r.weights).toEqual([
      { position: 500, weight: 2 },
      { position: 1500, weight: 1 }
    ])
  })

  it("gaps at the start of a stream count as removed; a stream without entries keeps all", () => {
    expect(calculateStream({ ...noLimits, maxCount: 1 }, entries([4, 5, 6]), 6, context(10_000)).discardPoint).toBe(6)
    expect(calculateStream({ ...noLimits, maxCount: 1 }, [], -1, context(10_000))).toEqual({
      discardPoint: 0,
      maybeDiscardPoint: 0,
      weights: []
    })
    expect(calculateStream(noLimits, entries([3, 4]), 4, context(10_000)).discardPoint).toBe(3)
  })
})

describe("chunk and index discard rules", () => {
  const ctx = { spPosition: 1000, effectiveNowMicros: NOW, unsafeIgnoreHardDeletes: false }
  it("judges the maybe range by each record's own timestamp, strictly before the cutoff", () => {
    const info = { isTombstoned: false, discardPoint: 2, maybeDiscardPoint: 5, maxAgeSeconds: 10 }
    const cutoff = NOW - 10_000_000
    expect(discardsOriginalEvent(info, 1, 100, NOW, ctx)).toBe(true)
    expect(discardsOriginalEvent(info, 3, 300, cutoff - 1, ctx)).toBe(true)
    expect(discardsOriginalEvent(info, 3, 300, cutoff, ctx)).toBe(false)
    expect(discardsOriginalEvent(info, 5, 500, cutoff - 1, ctx)).toBe(false)
    expect(discardsOriginalEvent(info, 1, 1000, NOW, ctx)).toBe(false) // at the SP
    expect(discardsOriginalEvent(undefined, 0, 0, 0, ctx)).toBe(false)
    // The index only drops below the definite point: maybe-expired entries stay.
    expect(dropsOriginalEntry(info, 3, 300, ctx)).toBe(false)
    expect(dropsOriginalEntry(info, 1, 100, ctx)).toBe(true)
  })

  it("a metastream keeps only its latest metadata, and nothing once its stream is tombstoned", () => {
    expect(discardsMetastreamEvent({ isTombstoned: false, discardPoint: 3 }, 2, 200, ctx)).toBe(true)
    expect(discardsMetastreamEvent({ isTombstoned: false, discardPoint: 3 }, 3, 300, ctx)).toBe(false)
    expect(discardsMetastreamEvent({ isTombstoned: true, discardPoint: 3 }, 3, 300, ctx)).toBe(true)
  })

  it("unsafeIgnoreHardDeletes removes a tombstoned stream entirely", () => {
    const info = { isTombstoned: true, discardPoint: 3, maybeDiscardPoint: 3, maxAgeSeconds: undefined }
    expect(discardsOriginalEvent(info, Number.MAX_SAFE_INTEGER, 400, 0, ctx)).toBe(false)
    expect(
      discardsOriginalEvent(info, Number.MAX_SAFE_INTEGER, 400, 0, { ...ctx, unsafeIgnoreHardDeletes: true })
    ).toBe(true)
  })
})

describe("merge planning", () => {
  it("groups neighbours greedily while their data fits one chunk; lone chunks are left alone", () => {
    const c = (n: number, size: number) => ({ startNumber: n, endNumber: n, physicalDataSize: size })
    expect(planMerges([c(0, 400), c(1, 500), c(2, 200), c(3, 900), c(4, 50)], 1000)).toEqual([
      { startNumber: 0, endNumber: 1, chunks: 2 },
      { startNumber: 3, endNumber: 4, chunks: 2 }
    ])
    expect(planMerges([c(0, 600), c(1, 600)], 1000)).toEqual([])
    expect(planMerges([c(0, 0), c(1, 0), c(2, 1000)], 1000)).toEqual([{ startNumber: 0, endNumber: 2, chunks: 3 }])
  })
})

describe("throttle", () => {
  it("rests so the run works its share of the time", () => {
    expect(restMillis(100, 10_000, 0)).toBe(0)
    expect(restMillis(50, 10_000, 0)).toBe(10_000) // worked 10 s: rest 10 s to be at 50%
    expect(restMillis(50, 20_000, 10_000)).toBe(0)
    expect(restMillis(25, 4_000, 0)).toBeCloseTo(12_000)
  })
})
