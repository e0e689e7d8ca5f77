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
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 8 })), {
          maxLength: 300
        }),
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
      ),
      { numRuns: 300 }
    )
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
