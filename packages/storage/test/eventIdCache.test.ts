import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { EventIdCache } from "../src/cache/EventIdCache.js"
import { uuidWords } from "../src/codec/bytes.js"
import { GenerationalCache } from "../src/cache/GenerationalCache.js"
import type { KnownEvent } from "../src/streams/commitCheck.js"

const id = (n: number) => `0000000${n % 3}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

describe("EventIdCache", () => {
  it("answers the stream and number an id was put with, exactly by all 128 bits", () => {
    const cache = new EventIdCache(1000)
    cache.put("0123abcd-4567-4890-abcd-ef0123456789", { stream: "a", eventNumber: 7 })
    expect(cache.get("0123abcd-4567-4890-abcd-ef0123456789")).toEqual({ stream: "a", eventNumber: 7 })
    expect(cache.get("0123ABCD-4567-4890-ABCD-EF0123456789")).toEqual({ stream: "a", eventNumber: 7 })
    // Differs in one bit of each word in turn.
    for (const other of [
      "1123abcd-4567-4890-abcd-ef0123456789",
      "0123abcd-4577-4890-abcd-ef0123456789",
      "0123abcd-4567-4890-abcc-ef0123456789",
      "0123abcd-4567-4890-abcd-ef0123456788"
    ]) {
      expect(cache.get(other)).toBeUndefined()
    }
  })

  it("forgets an id and keeps every other one findable (backward-shift deletion over long probe runs)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 200 })), { maxLength: 600 }), (ops) => {
        // Room for every id in one generation: only forgetting removes anything.
        const cache = new EventIdCache(1000)
        const model = new Map<string, number>()
        for (const [isPut, n] of ops) {
          if (isPut) {
            cache.put(id(n), { stream: "s", eventNumber: n })
            model.set(id(n), n)
          } else {
            cache.forget(id(n))
            model.delete(id(n))
          }
        }
        for (let n = 0; n <= 200; n++) {
          const expected = model.get(id(n))
          expect(cache.get(id(n))).toEqual(expected === undefined ? undefined : { stream: "s", eventNumber: expected })
        }
      })
    )
  })

  it("forgets an id in either generation", () => {
    const cache = new EventIdCache(4)
    cache.put(id(1), { stream: "s", eventNumber: 1 })
    cache.put(id(2), { stream: "s", eventNumber: 2 })
    cache.put(id(3), { stream: "s", eventNumber: 3 })
    cache.forget(id(1))
    cache.forget(id(3))
    expect(cache.get(id(1))).toBeUndefined()
    expect(cache.get(id(2))).toEqual({ stream: "s", eventNumber: 2 })
    expect(cache.get(id(3))).toBeUndefined()
  })

  it("never caches a string that is not a UUID", () => {
    const cache = new EventIdCache(10)
    for (const bad of [
      "",
      "not-a-uuid",
      "0123abcd-4567-4890-abcd-ef012345678g",
      "0123abcd+4567-4890-abcd-ef0123456789"
    ]) {
      cache.put(bad, { stream: "a", eventNumber: 0 })
      expect(cache.get(bad)).toBeUndefined()
    }
    expect(uuidWords("0123abcd4567489 0abcdef0123456789", new Int32Array(4))).toBe(false)
  })

  it("keeps exactly what a two-generation cache of the same capacity keeps (GenerationalCache as the model)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 60 }), fc.constantFrom("s", "t"), fc.nat(5)), {
          maxLength: 400
        }),
        (capacity, ops) => {
          const cache = new EventIdCache(capacity)
          const model = new GenerationalCache<string, KnownEvent>(capacity)
          for (const [isPut, n, stream, eventNumber] of ops) {
            if (isPut) {
              cache.put(id(n), { stream, eventNumber })
              model.set(id(n), { stream, eventNumber })
            } else {
              expect(cache.get(id(n))).toEqual(model.get(id(n)))
            }
          }
        }
      ),
      { numRuns: 300 }
    )
  })

  it("stays correct across many rotations of a large generation", () => {
    const cache = new EventIdCache(20_000)
    for (let i = 0; i < 100_000; i++) cache.put(id(i), { stream: `s${i % 7}`, eventNumber: i })
    for (let i = 0; i < 5_000; i++) cache.put(id(100_000 + i), { stream: "t", eventNumber: i })
    // Generations of 10,000: the last full one (90,000..99,999) and the young one are kept, older ids gone.
    expect(cache.get(id(104_999))).toEqual({ stream: "t", eventNumber: 4_999 })
    expect(cache.get(id(99_999))).toEqual({ stream: `s${99_999 % 7}`, eventNumber: 99_999 })
    expect(cache.get(id(90_000))).toEqual({ stream: `s${90_000 % 7}`, eventNumber: 90_000 })
    expect(cache.get(id(89_999))).toBeUndefined()
  })
})
