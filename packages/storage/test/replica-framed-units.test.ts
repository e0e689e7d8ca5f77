/**
 * The leader cuts slices by the records' framing (framedUnits.ts): whole units only, as many as fit in the
 * slice's size (the first whatever its size), and anything not framed as the log frames it is reported.
 */
import { describe, it, assert } from "@effect/vitest"
import { Prng } from "@vellum/platform"
import { EventFlags, type EventRecord } from "../src/log/records.js"
import { wholeUnitsLength } from "../src/replica/framedUnits.js"
import { bytesOf, eventOfSize } from "./log-support.js"

const prng = new Prng(7)
/** A unit of `records` events of 100 framed bytes each, at `position`. */
const unit = (position: number, records: number): Buffer =>
  Buffer.concat(
    Array.from({ length: records }, (_, i) => {
      const flags = (i === 0 ? EventFlags.BatchBegin : 0) | (i === records - 1 ? EventFlags.BatchEnd : 0)
      return bytesOf({ ...(eventOfSize(prng, 100) as Omit<EventRecord, "logPosition">), flags }, position + i * 100)
    })
  )

describe("slices cut by the framing", () => {
  const from = 5_000
  // Units of 200, 100 and 300 bytes.
  const log = Buffer.concat([unit(from, 2), unit(from + 200, 1), unit(from + 300, 3)])

  it("takes whole units while they fit, and the first one whatever its size", () => {
    assert.strictEqual(wholeUnitsLength(log, from, 10_000), 600)
    assert.strictEqual(wholeUnitsLength(log, from, 300), 300)
    assert.strictEqual(wholeUnitsLength(log, from, 250), 200, "the next unit would pass the size")
    assert.strictEqual(wholeUnitsLength(log, from, 50), 200, "the first unit goes whole")
  })

  it("ends before a unit that is not whole in the bytes, and says when none is", () => {
    assert.strictEqual(wholeUnitsLength(log.subarray(0, 550), from, 10_000), 300)
    assert.strictEqual(wholeUnitsLength(log.subarray(0, 100), from, 10_000), 0, "the unit goes on past the bytes")
    assert.strictEqual(wholeUnitsLength(log.subarray(0, 150), from, 10_000), 0, "a record cut short")
  })

  it("reports records at the wrong position and bytes that are not framed records", () => {
    assert.strictEqual(wholeUnitsLength(log, from + 1, 10_000), "damaged", "not where the records lie")
    assert.strictEqual(wholeUnitsLength(log.subarray(100), from + 100, 10_000), 500, "from a record inside a unit")
    assert.strictEqual(wholeUnitsLength(log.subarray(4), from + 4, 10_000), "damaged", "not where a record starts")
    const bad = Buffer.from(log)
    bad.writeUInt32LE(200, 100 + 96) // the second record's length suffix
    assert.strictEqual(wholeUnitsLength(bad, from, 10_000), "damaged")
    const huge = Buffer.from(log)
    huge.writeUInt32LE(0x7fffffff, 0)
    assert.strictEqual(wholeUnitsLength(huge, from, 10_000), "damaged", "no need to read on for it")
  })
})
