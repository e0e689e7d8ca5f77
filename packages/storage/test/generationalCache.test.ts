import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { GenerationalCache } from "../src/cache/GenerationalCache.js"

describe("GenerationalCache", () => {
  it("keeps recently set and recently read entries, and drops the rest", () => {
    const cache = new GenerationalCache<number, string>(4)
    cache.set(1, "a")
    cache.set(2, "b") // young reaches 2 = half: becomes old
    cache.set(3, "c")
    expect(cache.get(1)).toBe("a") // promoted from old
    cache.set(4, "d") // rotates: old = {3, 1, 4}, 2 dropped
    expect(cache.get(2)).toBeUndefined()
    expect(cache.get(1)).toBe("a")
    expect(cache.get(3)).toBe("c")
  })

  it("never holds more than its capacity plus two of its largest values, and a get never evicts", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 64 }),
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 8 })), { maxLength: 300 }),
      (capacity, ops) => {
        const cache = new GenerationalCache<number, { w: number }>(capacity, (v) => v.w)
        for (const [isSet, key, w] of ops) {
          if (isSet) cache.set(key, { w })
          else {
            const before = cache.size
            const seen = [...Array(41).keys()].filter((k) => cache.peek(k) !== undefined)
            cache.get(key)
            expect(cache.size).toBe(before)
            for (const k of seen) expect(cache.peek(k)).toBeDefined()
          }
          // Each generation rotates once it reaches half the capacity, so each can overshoot by one value.
          expect(cache.weight).toBeLessThanOrEqual(capacity + 2 * 8)
          let sum = 0
          for (let k = 0; k <= 40; k++) sum += cache.peek(k)?.w ?? 0
          expect(sum).toBe(cache.weight)
        }
      }
    ), { numRuns: 300 })
  })

  it("add (unit weights) agrees with a model map on every lookup and stays within its capacity plus two", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 32 }),
      fc.array(fc.tuple(fc.constantFrom("add", "get", "delete"), fc.integer({ min: 0, max: 20 }), fc.integer()), { maxLength: 300 }),
      (capacity, ops) => {
        const cache = new GenerationalCache<number, number>(capacity)
        const model = new Map<number, number>()
        for (const [op, key, value] of ops) {
          if (op === "add") {
            cache.add(key, value)
            model.set(key, value)
          } else if (op === "delete") {
            cache.delete(key)
            model.delete(key)
          } else {
            // A cache may have forgotten a key, but never answers with a value other than the latest one.
            const got = cache.get(key)
            if (got !== undefined) expect(got).toBe(model.get(key))
          }
          expect(cache.weight).toBeLessThanOrEqual(capacity + 2)
          expect(cache.weight).toBe(cache.size)
        }
      }
    ), { numRuns: 300 })
  })

  it("skips a value heavier than the whole capacity", () => {
    const cache = new GenerationalCache<string, Buffer>(10, (b) => b.length)
    cache.set("big", Buffer.alloc(11))
    expect(cache.get("big")).toBeUndefined()
    expect(cache.weight).toBe(0)
  })
})

describe("GenerationalCache under a lookup-heavy pattern", () => {
  it("stays bounded when every old entry is read back before each insert", () => {
    const cache = new GenerationalCache<number, number>(100)
    for (let i = 0; i < 10_000; i++) {
      for (let k = Math.max(0, i - 200); k < i; k++) cache.get(k)
      cache.set(i, i)
      expect(cache.weight).toBeLessThanOrEqual(102)
    }
  })
})
