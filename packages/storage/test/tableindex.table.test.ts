import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { Disk, MemoryDisk } from "@vellum/platform"
import { BlockCache } from "../src/tableindex/BlockCache.js"
import { BLOOM_PROBES, bloomAdd, bloomMayContain, bloomWordsFor } from "../src/tableindex/Bloom.js"
import { ENTRY_WORDS, type EntrySource, type IndexEntry, writeEntry } from "../src/tableindex/Entry.js"
import { decodeManifest, encodeManifest, readManifest, writeManifest } from "../src/tableindex/Manifest.js"
import { MemTable } from "../src/tableindex/MemTable.js"
import { mergeSource } from "../src/tableindex/Merge.js"
import { streamHash64, weakHash } from "../src/tableindex/StreamHash.js"
import { FENCE_BYTES, FOOTER_BYTES, HEADER_BYTES, openTable, type Table } from "../src/tableindex/Table.js"
import { writeTable } from "../src/tableindex/TableWriter.js"

type Key = readonly [hi: number, lo: number, en: number, pos: number]
const cmp = (a: Key, b: Key) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]

/** A source over sorted keys, `per` entries per pull at most (to exercise chunk boundaries). */
const arraySource = (keys: ReadonlyArray<Key>, per = 1000): EntrySource => {
  let i = 0
  return {
    pull: (out) =>
      Effect.sync(() => {
        const max = Math.min(per, Math.floor(out.length / ENTRY_WORDS))
        let n = 0
        while (n < max && i < keys.length) {
          const k = keys[i++]!
          writeEntry(out, n++, k[0], k[1], k[2], k[3])
        }
        return n
      })
  }
}

/** Runs a table lookup: synchronous from the cache (undefined) or an Effect that reads. */
const lookup = <E>(
  f: (out: Array<IndexEntry>) => Effect.Effect<void, E> | undefined
): Effect.Effect<Array<IndexEntry>, E> =>
  Effect.suspend(() => {
    const out: Array<IndexEntry> = []
    const read = f(out)
    return read === undefined ? Effect.succeed(out) : Effect.as(read, out)
  })

const collect = (t: Table, hi: number, lo: number, from = 0, to = Number.MAX_SAFE_INTEGER) =>
  Effect.map(
    lookup((out) => t.range(hi, lo, from, to, out)),
    (out) => out.map((e) => [e.eventNumber, e.position] as const)
  )

const run = <A, E>(disk: MemoryDisk, effect: Effect.Effect<A, E, Disk>) =>
  Effect.runPromise(Effect.provide(effect, MemoryDisk.layer(disk)))

const makeKeys = (n: number, hashes: number, seed: number): Array<Key> => {
  const keys: Array<Key> = []
  let x = seed
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0)
  for (let i = 0; i < n; i++) {
    const h = next() % hashes
    keys.push([h % 3, h, next() % 50, next() % 1000])
  }
  return keys.sort(cmp)
}

describe("Table", () => {
  it("roundtrips entries, including the tombstone and positions above 2^32", async () => {
    const disk = new MemoryDisk()
    const keys: Array<Key> = (
      [
        [0, 1, 0, 0],
        [0, 1, 0, 0],
        [0, 1, 1, 2 ** 33 + 5],
        [0, 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
        [0xffffffff, 0xffffffff, 7, 2 ** 52],
        [5, 0, 3, 9]
      ] satisfies Array<Key>
    ).sort(cmp)
    await run(
      disk,
      Effect.gen(function* () {
        yield* Effect.flatMap(Disk, (d) => d.mkdir("/ix"))
        const written = yield* writeTable("/ix/t1", arraySource(keys, 2), { entriesPerBlock: 2, chunkBytes: 48 })
        assert.strictEqual(written.entryCount, keys.length)
        assert.strictEqual(written.distinctHashes, 3)
        const t = yield* openTable("/ix/t1", 1, { verify: true, chunkBytes: 48, cache: new BlockCache(1 << 20) })
        assert.deepStrictEqual(yield* collect(t, 0, 1), [
          [0, 0],
          [0, 0],
          [1, 2 ** 33 + 5],
          [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]
        ])
        assert.deepStrictEqual(yield* collect(t, 0xffffffff, 0xffffffff), [[7, 2 ** 52]])
        assert.deepStrictEqual(yield* collect(t, 5, 0, 3, 3), [[3, 9]])
        assert.deepStrictEqual(yield* collect(t, 5, 1), [])
        assert.deepStrictEqual(yield* collect(t, 0, 1, 1, Number.MAX_SAFE_INTEGER - 1), [[1, 2 ** 33 + 5]])
        const latest = yield* lookup((out) => t.latest(0, 1, 1, out))
        assert.deepStrictEqual(
          latest.map((e) => e.eventNumber),
          [Number.MAX_SAFE_INTEGER]
        )
        assert.strictEqual(t.blockCount, 3)
        assert.strictEqual(t.fileBytes, HEADER_BYTES + 6 * 24 + 3 * FENCE_BYTES + t.bloom.length * 4 + FOOTER_BYTES)
        yield* t.close()
      })
    )
  })

  it("writes a table larger than its first chunks (they grow to the chunk size) byte for byte as in one chunk", async () => {
    const disk = new MemoryDisk()
    const keys = makeKeys(9_000, 40, 7)
    await run(
      disk,
      Effect.gen(function* () {
        yield* Effect.flatMap(Disk, (d) => d.mkdir("/ix"))
        yield* writeTable("/ix/grown", arraySource(keys, 10_000), { entriesPerBlock: 16 })
        yield* writeTable("/ix/whole", arraySource(keys, 10_000), { entriesPerBlock: 16, chunkBytes: 24 * 10_000 })
        const t = yield* openTable("/ix/grown", 1, { verify: true, cache: new BlockCache(1 << 20) })
        assert.strictEqual(t.entryCount, keys.length)
      })
    )
    assert.isTrue(disk.readFileSync("/ix/grown").equals(disk.readFileSync("/ix/whole")))
  })

  it("finds every range at block boundaries (property, small blocks)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer(),
        async (n, per, hashes, seed) => {
          const disk = new MemoryDisk()
          const keys = makeKeys(n, hashes, seed)
          await run(
            disk,
            Effect.gen(function* () {
              yield* Effect.flatMap(Disk, (d) => d.mkdir("/ix"))
              yield* writeTable("/ix/t", arraySource(keys, 7), { entriesPerBlock: per, chunkBytes: 24 * 5 })
              // A tiny cache: evictions happen.
              const t = yield* openTable("/ix/t", 1, { verify: true, cache: new BlockCache(per * 24 * 3) })
              for (let h = 0; h < hashes + 1; h++) {
                const mine = keys.filter((k) => k[0] === h % 3 && k[1] === h)
                for (const [from, to] of [
                  [0, 49],
                  [0, 0],
                  [10, 20],
                  [25, 25],
                  [49, 100],
                  [30, 10]
                ] as const) {
                  const want = mine.filter((k) => k[2] >= from && k[2] <= to).map((k) => [k[2], k[3]] as const)
                  assert.deepStrictEqual(yield* collect(t, h % 3, h, from, to), want)
                }
                for (const limit of [1, 3, 1000]) {
                  const out = yield* lookup((o) => t.latest(h % 3, h, limit, o))
                  const desc = [...mine].sort((a, b) => b[2] - a[2] || a[3] - b[3])
                  const got = out.sort((a, b) => b.eventNumber - a.eventNumber || a.position - b.position)
                  // At least `limit` (or all), and the top `limit` agree with the model.
                  assert.isTrue(got.length >= Math.min(limit, desc.length))
                  assert.deepStrictEqual(
                    got.slice(0, limit).map((e) => [e.eventNumber, e.position]),
                    desc.slice(0, limit).map((k) => [k[2], k[3]])
                  )
                }
              }
              yield* t.close()
            })
          )
        }
      ),
      { numRuns: 120 }
    )
  })

  it("writes a memtable and merges tables into their sorted union", async () => {
    const disk = new MemoryDisk()
    const hash = weakHash(3)
    await run(
      disk,
      Effect.gen(function* () {
        yield* Effect.flatMap(Disk, (d) => d.mkdir("/ix"))
        const tables: Array<Table> = []
        const all: Array<Key> = []
        for (let t = 0; t < 4; t++) {
          const m = new MemTable(hash)
          for (let i = 0; i < 300; i++) {
            const s = `s${(i * 13 + t) % 37}`
            m.add(s, i, t * 1000 + i)
            const h = hash(s)
            all.push([h.hi, h.lo, i, t * 1000 + i])
          }
          yield* writeTable(`/ix/m${t}`, m.source(), { entriesPerBlock: 16, chunkBytes: 24 * 50 })
          tables.push(yield* openTable(`/ix/m${t}`, t + 1, { verify: true }))
        }
        const merged = yield* writeTable("/ix/merged", mergeSource(tables, 24 * 33), {
          entriesPerBlock: 10,
          chunkBytes: 24 * 64
        })
        assert.strictEqual(merged.entryCount, 1200)
        const t = yield* openTable("/ix/merged", 9, { verify: true })
        all.sort(cmp)
        for (let lo = 0; lo < 8; lo++) {
          assert.deepStrictEqual(
            yield* collect(t, 0, lo),
            all.filter((k) => k[1] === lo).map((k) => [k[2], k[3]] as const)
          )
        }
      })
    )
  })

  it("detects corruption: header, fences, bloom, entries (with verify, on lookup, during a merge)", async () => {
    const keys = makeKeys(200, 5, 42)
    const corruptAt = async (
      offset: (size: number) => number,
      verify: boolean,
      then: "open" | "merge" | "lookup" = "open"
    ) => {
      const disk = new MemoryDisk()
      return run(
        disk,
        Effect.gen(function* () {
          const d = yield* Disk
          yield* d.mkdir("/ix")
          yield* writeTable("/ix/t", arraySource(keys), { entriesPerBlock: 8 })
          const h = yield* d.open("/ix/t")
          const size = yield* h.size
          const at = offset(size)
          const [byte] = yield* h.read(at, 1)
          yield* h.write(at, Buffer.from([byte! ^ 0x10]))
          yield* h.close
          const opened = yield* Effect.either(openTable("/ix/t", 1, { verify }))
          if (then === "open" || opened._tag === "Left") return opened._tag === "Left" ? opened.left._tag : "ok"
          if (then === "lookup") {
            // Every block read is checked against its CRC in the fences.
            const all = yield* Effect.either(Effect.forEach([0, 1, 2, 3, 4], (h) => collect(opened.right, h % 3, h)))
            return all._tag === "Left" ? all.left._tag : "ok"
          }
          const merged = yield* Effect.either(
            writeTable("/ix/out", mergeSource([opened.right]), { entriesPerBlock: 8 })
          )
          return merged._tag === "Left" ? merged.left._tag : "ok"
        })
      )
    }
    assert.strictEqual(await corruptAt(() => 3, false), "IndexCorrupt")
    assert.strictEqual(await corruptAt((size) => size - 10, false), "IndexCorrupt")
    assert.strictEqual(await corruptAt(() => HEADER_BYTES + 200 * 24 + 5, false), "IndexCorrupt") // fences
    assert.strictEqual(await corruptAt((size) => size - FOOTER_BYTES - 3, false), "IndexCorrupt") // bloom
    assert.strictEqual(await corruptAt(() => HEADER_BYTES + 100 * 24 + 17, false), "ok") // entries: not read on open
    assert.strictEqual(await corruptAt(() => HEADER_BYTES + 100 * 24 + 17, true), "IndexCorrupt")
    assert.strictEqual(await corruptAt(() => HEADER_BYTES + 100 * 24 + 17, false, "merge"), "IndexCorrupt")
    assert.strictEqual(await corruptAt(() => HEADER_BYTES + 100 * 24 + 17, false, "lookup"), "IndexCorrupt")
    assert.strictEqual(await corruptAt(() => HEADER_BYTES + 199 * 24 + 3, false, "lookup"), "IndexCorrupt")
    assert.strictEqual(await corruptAt(() => 5 * 1024, false, "lookup"), "IndexCorrupt") // past the entries: fences
  })
})

describe("Bloom filter", () => {
  it("has no false negatives and about 1% false positives", () => {
    const n = 20_000
    const words = new Uint32Array(bloomWordsFor(n))
    for (let i = 0; i < n; i++) {
      const h = streamHash64(`in-${i}`)
      bloomAdd(words, BLOOM_PROBES, h.hi, h.lo)
    }
    for (let i = 0; i < n; i++) {
      const h = streamHash64(`in-${i}`)
      assert.isTrue(bloomMayContain(words, BLOOM_PROBES, h.hi, h.lo))
    }
    let fp = 0
    for (let i = 0; i < n; i++) {
      const h = streamHash64(`out-${i}`)
      if (bloomMayContain(words, BLOOM_PROBES, h.hi, h.lo)) fp++
    }
    assert.isBelow(fp / n, 0.02)
    // Weak hashes (tiny values) still work.
    const small = new Uint32Array(bloomWordsFor(4))
    for (let lo = 0; lo < 4; lo++) bloomAdd(small, BLOOM_PROBES, 0, lo)
    for (let lo = 0; lo < 4; lo++) assert.isTrue(bloomMayContain(small, BLOOM_PROBES, 0, lo))
  })
})

describe("Manifest", () => {
  it("roundtrips and rejects damage", async () => {
    const m = { coveredPosition: 2 ** 40, nextTableId: 7, tables: [{ id: 3, level: 1, file: "0000000003.vtable" }] }
    assert.deepStrictEqual(decodeManifest(encodeManifest(m)), m)
    const bytes = encodeManifest(m)
    bytes[bytes.length - 5] ^= 1
    assert.isString(decodeManifest(bytes))
    assert.isString(decodeManifest(Buffer.from("garbage")))
    assert.isString(decodeManifest(encodeManifest({ ...m, nextTableId: 3 })))
    const disk = new MemoryDisk()
    await run(
      disk,
      Effect.gen(function* () {
        yield* Effect.flatMap(Disk, (d) => d.mkdir("/ix"))
        assert.isUndefined(yield* readManifest("/ix"))
        yield* writeManifest("/ix", m)
        assert.deepStrictEqual(yield* readManifest("/ix"), m)
      })
    )
    disk.crash(new (await import("@vellum/platform")).Prng(1), "strict")
    await run(
      disk,
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* readManifest("/ix"), m)
        const h = yield* Effect.flatMap(Disk, (d) => d.open("/ix/indexmap"))
        yield* h.write(30, Buffer.from("x"))
        const r = yield* Effect.either(readManifest("/ix"))
        assert.strictEqual(r._tag === "Left" && r.left._tag, "IndexCorrupt")
      })
    )
  })
})
