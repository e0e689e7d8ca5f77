import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { murmur3Utf16, streamHash64, weakHash, xxh32Utf16 } from "../src/tableindex/StreamHash.js"

// Byte-wise reference implementations, checked against published vectors, then against the string versions.
const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0
const murmurBytes = (b: Uint8Array, seed: number): number => {
  let h = seed >>> 0
  const n = b.length
  let i = 0
  for (; i + 4 <= n; i += 4) {
    let k = (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0
    k = Math.imul(k, 0xcc9e2d51)
    k = rotl(k, 15)
    k = Math.imul(k, 0x1b873593)
    h ^= k
    h = rotl(h, 13)
    h = (Math.imul(h, 5) + 0xe6546b64) >>> 0
  }
  let k = 0
  const rem = n & 3
  if (rem === 3) k ^= b[i + 2]! << 16
  if (rem >= 2) k ^= b[i + 1]! << 8
  if (rem >= 1) {
    k ^= b[i]!
    k = Math.imul(k, 0xcc9e2d51)
    k = rotl(k, 15)
    k = Math.imul(k, 0x1b873593)
    h ^= k
  }
  h ^= n
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}
const P1 = 0x9e3779b1,
  P2 = 0x85ebca77,
  P3 = 0xc2b2ae3d,
  P4 = 0x27d4eb2f,
  P5 = 0x165667b1
const xxhBytes = (b: Uint8Array, seed: number): number => {
  const n = b.length
  const u32 = (i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0
  const round = (acc: number, lane: number) => Math.imul(rotl((acc + Math.imul(lane, P2)) >>> 0, 13), P1) >>> 0
  let i = 0
  let h: number
  if (n >= 16) {
    let v1 = (seed + P1 + P2) >>> 0,
      v2 = (seed + P2) >>> 0,
      v3 = seed >>> 0,
      v4 = (seed - P1) >>> 0
    for (; i + 16 <= n; i += 16) {
      v1 = round(v1, u32(i))
      v2 = round(v2, u32(i + 4))
      v3 = round(v3, u32(i + 8))
      v4 = round(v4, u32(i + 12))
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) >>> 0
  } else h = (seed + P5) >>> 0
  h = (h + n) >>> 0
  for (; i + 4 <= n; i += 4) h = Math.imul(rotl((h + Math.imul(u32(i), P3)) >>> 0, 17), P4) >>> 0
  for (; i < n; i++) h = Math.imul(rotl((h + Math.imul(b[i]!, P5)) >>> 0, 11), P1) >>> 0
  h ^= h >>> 15
  h = Math.imul(h, P2)
  h ^= h >>> 13
  h = Math.imul(h, P3)
  h ^= h >>> 16
  return h >>> 0
}

describe("stream hash", () => {
  it("byte references match published vectors", () => {
    const b = (s: string) => Buffer.from(s, "latin1")
    expect(murmurBytes(b(""), 0)).toBe(0)
    expect(murmurBytes(b(""), 1)).toBe(0x514e28b7)
    expect(murmurBytes(b("hello"), 0)).toBe(0x248bfa47)
    expect(murmurBytes(b("The quick brown fox jumps over the lazy dog"), 0)).toBe(0x2e4ff723)
    expect(xxhBytes(b(""), 0)).toBe(0x02cc5d05)
    expect(xxhBytes(b("a"), 0)).toBe(0x550d7456)
    expect(xxhBytes(b("abc"), 0)).toBe(0x32d153ff)
    expect(xxhBytes(b("Nobody inspects the spammish repetition"), 0)).toBe(0xe2293b2f)
  })

  it("string versions equal the byte references over UTF-16LE", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), fc.integer(), (s, seed) => {
        const bytes = Buffer.from(s, "utf16le")
        expect(murmur3Utf16(s, seed)).toBe(murmurBytes(bytes, seed >>> 0))
        expect(xxh32Utf16(s, seed)).toBe(xxhBytes(bytes, seed >>> 0))
      }),
      { numRuns: 2000 }
    )
  })

  it("is deterministic and the halves are unsigned", () => {
    const a = streamHash64("orders-42")
    expect(streamHash64("orders-42")).toEqual(a)
    expect(a.hi).toBeGreaterThanOrEqual(0)
    expect(a.lo).toBeGreaterThanOrEqual(0)
    expect(Number.isInteger(a.hi) && a.hi < 2 ** 32 && a.lo < 2 ** 32).toBe(true)
    expect(streamHash64("orders-43")).not.toEqual(a)
  })

  it("spreads similar names: no 64-bit collision in 200k names, halves near-uniform", () => {
    const n = 200_000
    const seen = new Set<string>()
    const buckets = new Array<number>(256).fill(0)
    const hiSeen = new Set<number>()
    for (let i = 0; i < n; i++) {
      const h = streamHash64(`stream-${i}`)
      seen.add(`${h.hi}:${h.lo}`)
      hiSeen.add(h.hi)
      buckets[h.lo & 0xff]!++
      buckets[h.hi >>> 24]!++
    }
    expect(seen.size).toBe(n)
    // Expected 32-bit collisions among 200k random values ≈ n²/2³³ ≈ 4.7.
    expect(n - hiSeen.size).toBeLessThan(30)
    const expected = (2 * n) / 256
    const chi2 = buckets.reduce((s, c) => s + (c - expected) ** 2 / expected, 0)
    expect(chi2).toBeLessThan(400) // 255 degrees of freedom
  })

  it("weakHash forces collisions", () => {
    const h = weakHash(2)
    const values = new Set(Array.from({ length: 100 }, (_, i) => h(`s${i}`).lo))
    expect(values.size).toBeLessThanOrEqual(4)
    expect(values.size).toBeGreaterThan(1)
  })
})
