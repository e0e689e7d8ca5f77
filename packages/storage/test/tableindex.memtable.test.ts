import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { MemTable } from "../src/tableindex/MemTable.js"
import { streamHash64, weakHash } from "../src/tableindex/StreamHash.js"

type Pair = [number, number]
const sortPairs = (ps: Array<Pair>) => ps.sort((a, b) => a[0] - b[0] || a[1] - b[1])

describe("MemTable", () => {
  it("adds, ranges and latest per exact stream name", () => {
    const m = new MemTable(streamHash64)
    m.add("a", 0, 10)
    m.add("b", 0, 20)
    m.add("a", 1, 30)
    m.add("a", 3, 40) // gap
    m.add("a", 3, 50) // duplicate event number, kept
    m.add("a", Number.MAX_SAFE_INTEGER, 2 ** 40) // tombstone, large position
    expect(m.entryCount).toBe(6)
    expect(m.streamCount).toBe(2)
    expect(m.range("a", 1, 3).map((e) => [e.eventNumber, e.position])).toEqual([
      [1, 30],
      [3, 40],
      [3, 50]
    ])
    expect(m.range("a", 4, 10)).toEqual([])
    expect(m.range("c", 0, 10)).toEqual([])
    expect(m.range("a", 0, Number.MAX_SAFE_INTEGER).every((e) => e.exact)).toBe(true)
    expect(m.latest("a")).toEqual([{ eventNumber: Number.MAX_SAFE_INTEGER, position: 2 ** 40, exact: true }])
    expect(m.latest("a", 3).map((e) => [e.eventNumber, e.position])).toEqual([
      [Number.MAX_SAFE_INTEGER, 2 ** 40],
      [3, 40],
      [3, 50]
    ])
    // Ties cut by the limit keep the lowest positions.
    expect(m.latest("a", 2).map((e) => [e.eventNumber, e.position])).toEqual([
      [Number.MAX_SAFE_INTEGER, 2 ** 40],
      [3, 40]
    ])
    expect(m.latest("b", 5).map((e) => e.position)).toEqual([20])
  })

  it("sorts out-of-order adds on read", () => {
    const m = new MemTable(streamHash64)
    m.add("s", 5, 100)
    m.add("s", 2, 200)
    m.add("s", 5, 50)
    m.add("s", 9, 300)
    expect(m.range("s", 0, 100).map((e) => [e.eventNumber, e.position])).toEqual([
      [2, 200],
      [5, 50],
      [5, 100],
      [9, 300]
    ])
    m.add("s", 1, 400)
    expect(m.latest("s", 10).map((e) => [e.eventNumber, e.position])).toEqual([
      [9, 300],
      [5, 50],
      [5, 100],
      [2, 200],
      [1, 400]
    ])
  })

  it("matches a model over many streams (chunk chains, slabs)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 3 }), fc.boolean()), {
          maxLength: 3000
        }),
        (ops) => {
          const m = new MemTable(streamHash64, 2)
          const model = new Map<string, Array<Pair>>()
          let pos = 0
          for (const [s, step, backwards] of ops) {
            const name = `stream-${s}`
            const list = model.get(name) ?? []
            const last = list.length > 0 ? list[list.length - 1]![0] : 0
            const en = backwards ? Math.max(0, last - step) : last + step
            m.add(name, en, pos)
            list.push([en, pos++])
            model.set(name, list)
          }
          expect(m.entryCount).toBe(ops.length)
          for (const [name, list] of model) {
            const want = sortPairs([...list])
            expect(m.range(name, 0, Number.MAX_SAFE_INTEGER).map((e) => [e.eventNumber, e.position])).toEqual(want)
            const lo = want[Math.floor(want.length / 3)]![0]
            const hi = want[Math.floor((2 * want.length) / 3)]![0]
            expect(m.range(name, lo, hi).map((e) => [e.eventNumber, e.position])).toEqual(
              want.filter(([e]) => e >= lo && e <= hi)
            )
            const desc = [...want].sort((a, b) => b[0] - a[0] || a[1] - b[1])
            expect(m.latest(name, 3).map((e) => [e.eventNumber, e.position])).toEqual(desc.slice(0, 3))
          }
        }
      ),
      { numRuns: 60 }
    )
  })

  it("serves a long stream across many chunks and slabs", () => {
    const m = new MemTable(streamHash64)
    const n = 40_000
    for (let i = 0; i < n; i++) {
      m.add("long", i, i * 3)
      if (i % 7 === 0) m.add(`other-${i % 50}`, i, i * 3 + 1)
    }
    for (const [from, to] of [
      [0, 0],
      [0, 10],
      [4090, 4200],
      [8190, 8200],
      [12_000, 30_000],
      [39_990, 50_000]
    ] as const) {
      const got = m.range("long", from, to)
      const want = Array.from({ length: Math.min(to, n - 1) - from + 1 }, (_, k) => from + k)
      expect(got.map((e) => e.eventNumber)).toEqual(want)
      expect(got.every((e) => e.position === e.eventNumber * 3)).toBe(true)
    }
    expect(m.latest("long", 3).map((e) => e.eventNumber)).toEqual([n - 1, n - 2, n - 3])
    let count = 0
    let prev = -1
    m.forEachSorted((_hi, _lo, en, pos) => {
      count++
      if (pos % 3 === 0) {
        expect(en).toBe(prev + 1)
        prev = en
      }
    })
    expect(count).toBe(m.entryCount)
  })

  it("iterates in table order, merging colliding streams", () => {
    const hash = weakHash(1)
    const m = new MemTable(hash)
    const all: Array<[number, number, number, number]> = []
    let pos = 0
    for (let round = 0; round < 20; round++) {
      for (let s = 0; s < 7; s++) {
        const h = hash(`s${s}`)
        m.add(`s${s}`, round, pos)
        all.push([h.hi, h.lo, round, pos++])
      }
    }
    const seen: Array<[number, number, number, number]> = []
    m.forEachSorted((hi, lo, en, p) => seen.push([hi, lo, en, p]))
    all.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3])
    expect(seen).toEqual(all)
    expect(m.frozen).toBe(true)
    expect(() => m.add("x", 0, 0)).toThrow()
  })

  it("stays compact: bytes per entry over 1k and 20k streams", () => {
    for (const streams of [1000, 20_000]) {
      const m = new MemTable(streamHash64)
      const n = 200_000
      for (let i = 0; i < n; i++) m.add(`stream-${(i * 7919) % streams}`, Math.floor(i / streams), i * 100)
      const perEntry = m.byteSize() / n
      console.log(`memtable estimate: ${perEntry.toFixed(1)} B/entry over ${streams} streams`)
      expect(perEntry).toBeLessThan(streams === 1000 ? 24 : 40)
    }
  })
})
