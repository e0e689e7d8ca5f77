/**
 * Replacing completed chunks by scavenged ones (`TransactionLog.replaceChunks`): chunk execution (one file,
 * a subset kept), merging (several files, everything kept), every read path before and after a clean
 * reopen, determinism of the new file's bytes, refused ranges, reads across a switch, and disk errors at
 * every step (the replacement fails, the old chunks stay in use, the writer goes on).
 */
import { describe, expect, it } from "vitest"
import { it as effectIt } from "@effect/vitest"
import { Cause, Effect, Exit, TestClock } from "effect"
import { Disk, MemoryDisk, Prng } from "@vellum/platform"
import { verifyChunkFile } from "../src/log/ChunkFile.js"
import { FOOTER_SIZE, HEADER_SIZE } from "../src/log/chunkFormat.js"
import { BufferPool } from "../src/log/BufferPool.js"
import { RETIRED_HANDLE_GRACE_MILLIS } from "../src/log/ChunkReplacer.js"
import { openTransactionLog } from "../src/log/TransactionLog.js"
import {
  DIR,
  chunkIds,
  eventOfSize,
  filesIn,
  logConfig,
  openLog,
  sameRecord,
  sealUnit,
  writeUnits
} from "./log-support.js"
import {
  CHUNK_SIZE,
  Model,
  appendRandom,
  buildLog,
  checkContent,
  checkFiles,
  keepByPosition,
  scanForwardAll
} from "./log-rewrite-support.js"

const replace = (
  log: ReturnType<typeof buildLog>["log"],
  first: number,
  last: number,
  keep: (r: { logPosition: number }) => boolean
) => Effect.runSync(log.replaceChunks(first, last, keep))

describe("replaceChunks: chunk execution", () => {
  it("keeps exactly the chosen records at their positions, in a completed scavenged chunk", () => {
    for (const seed of [1, 2, 3]) {
      const { mem, log, written } = buildLog(seed)
      const model = new Model(written)
      const keep = keepByPosition(seed)
      const before = log.chunks()[2]!
      const [kept, removed] = model.remove(2, 2, keep)
      expect(kept).toBeGreaterThan(0)
      expect(removed).toBeGreaterThan(0)
      const result = replace(log, 2, 2, keep)
      expect(result).toMatchObject({ startNumber: 2, endNumber: 2, kept, removed })
      const after = log.chunks()[2]!
      expect(after.path).toBe(`${DIR}/chunk-000002.000001`)
      expect(after.header.isScavenged).toBe(true)
      expect(after.header.chunkId).not.toBe(before.header.chunkId)
      expect(after.posMap?.count).toBe(kept)
      expect(result.newBytes).toBe(mem.readFileSync(after.path).length)
      expect(result.oldBytes).toBe(HEADER_SIZE + before.dataSize + FOOTER_SIZE)
      expect(result.newBytes).toBeLessThan(result.oldBytes)
      expect(filesIn(mem)).not.toContain("chunk-000002.000000")
      Effect.runSync(verifyChunkFile(after))
      checkContent(log, model)
      checkFiles(mem, log)
    }
  })

  it("an empty result is a valid chunk that still covers its positions", () => {
    const { mem, log, written } = buildLog(4)
    const model = new Model(written)
    model.remove(1, 1, () => false)
    const result = replace(log, 1, 1, () => false)
    expect(result.kept).toBe(0)
    expect(result.newBytes).toBe(HEADER_SIZE + FOOTER_SIZE)
    const chunk = log.chunks()[1]!
    expect(chunk.header.isScavenged).toBe(true)
    expect(chunk.startPosition).toBe(CHUNK_SIZE)
    checkContent(log, model)
    checkFiles(mem, log)
    // After a reopen too: an empty position map still maps (everything to "removed").
    const reopened = openLog(mem.service, logConfig({ chunkSize: CHUNK_SIZE }))
    checkContent(reopened, model)
  })

  it("rewriting a scavenged chunk again bumps its version and keeps a shrinking subset", () => {
    const { mem, log, written } = buildLog(5)
    const model = new Model(written)
    for (const [salt, version] of [
      [11, 1],
      [12, 2],
      [13, 3]
    ] as const) {
      model.remove(3, 3, keepByPosition(salt))
      replace(log, 3, 3, keepByPosition(salt))
      expect(log.chunks()[3]!.path).toBe(`${DIR}/chunk-000003.00000${version}`)
      checkContent(log, model)
    }
    checkFiles(mem, log)
  })
})

describe("replaceChunks: merging", () => {
  it("a merged file covering 0..3 replaces the files of 0, 1..2 and 3; reads and scans cross it", () => {
    const { mem, log, written } = buildLog(6, 6)
    const model = new Model(written)
    model.remove(0, 0, keepByPosition(1))
    replace(log, 0, 0, keepByPosition(1))
    replace(log, 1, 2, () => true)
    expect(log.chunks().map((c) => [c.header.startNumber, c.header.endNumber])).toEqual([
      [0, 0],
      [1, 2],
      [3, 3],
      [4, 4],
      [5, 5],
      [6, 6]
    ])
    checkContent(log, model)
    const result = replace(log, 0, 3, () => true)
    expect(result).toMatchObject({ startNumber: 0, endNumber: 3, removed: 0 })
    expect(result.kept).toBe(model.visible().filter((w) => w.position < 4 * CHUNK_SIZE).length)
    const merged = log.chunks()[0]!
    expect(merged.path).toBe(`${DIR}/chunk-000000.000002`)
    expect([merged.header.startNumber, merged.header.endNumber, merged.header.isScavenged]).toEqual([0, 3, true])
    expect(log.chunks().length).toBe(4)
    expect(
      filesIn(mem)
        .filter((n) => n.startsWith("chunk-"))
        .sort()
    ).toEqual(["chunk-000000.000002", "chunk-000004.000000", "chunk-000005.000000", "chunk-000006.000000"])
    checkContent(log, model)
    checkFiles(mem, log)
    // Then scavenging the merged file: one physical chunk covering four logical ones.
    model.remove(0, 3, keepByPosition(2))
    replace(log, 0, 3, keepByPosition(2))
    checkContent(log, model)
    const reopened = openLog(mem.service, logConfig({ chunkSize: CHUNK_SIZE }))
    checkContent(reopened, model)
    checkFiles(mem, reopened)
  })

  it("the writer goes on after replacements, and everything survives a clean reopen", () => {
    const { mem, log, written } = buildLog(7)
    const model = new Model(written)
    model.remove(1, 1, keepByPosition(3))
    replace(log, 1, 1, keepByPosition(3))
    replace(log, 0, 1, () => true)
    const more = appendRandom(log, new Prng(70), log.writerPosition() + 2 * CHUNK_SIZE)
    const all = model.clone()
    const extended = new Model([...written, ...more])
    for (const w of written) if (!all.alive.has(w.position)) extended.alive.delete(w.position)
    checkContent(log, extended)
    Effect.runSync(log.close)
    const reopened = openLog(mem.service, logConfig({ chunkSize: CHUNK_SIZE }))
    checkContent(reopened, extended)
    checkFiles(mem, reopened)
  })
})

describe("replaceChunks: determinism", () => {
  it("byte-identical logs rewritten alike give byte-identical files", () => {
    const build = () => {
      const built = buildLog(8)
      replace(built.log, 2, 2, keepByPosition(5))
      replace(built.log, 0, 1, () => true)
      replace(built.log, 0, 2, keepByPosition(6))
      return built
    }
    const a = build()
    const b = build()
    const namesA = filesIn(a.mem)
    expect(namesA).toEqual(filesIn(b.mem))
    expect(namesA).toContain("chunk-000000.000002")
    for (const name of namesA)
      expect(a.mem.readFileSync(`${DIR}/${name}`).equals(b.mem.readFileSync(`${DIR}/${name}`))).toBe(true)
  })

  it("rewrites sharing a scavenge run's buffer pool give the same files as rewrites without one", () => {
    const build = (pool: BufferPool | undefined) => {
      const built = buildLog(8)
      const run = (first: number, last: number, keep: (r: { logPosition: number }) => boolean) =>
        Effect.runSync(built.log.replaceChunks(first, last, keep, pool === undefined ? undefined : { pool }))
      run(2, 2, keepByPosition(5))
      run(3, 3, keepByPosition(7))
      run(0, 1, () => true)
      run(0, 3, keepByPosition(6))
      return built
    }
    const pool = new BufferPool()
    const pooled = build(pool)
    const plain = build(undefined)
    // Every rewrite gave its scratch back, and the later ones reused it (dirty) without a byte changing.
    expect(pool.idleBytes).toBeGreaterThan(0)
    const names = filesIn(pooled.mem)
    expect(names).toEqual(filesIn(plain.mem))
    for (const name of names)
      expect(pooled.mem.readFileSync(`${DIR}/${name}`).equals(plain.mem.readFileSync(`${DIR}/${name}`))).toBe(true)
    checkContent(
      pooled.log,
      (() => {
        const model = new Model(pooled.written)
        model.remove(2, 2, keepByPosition(5))
        model.remove(3, 3, keepByPosition(7))
        model.remove(0, 3, keepByPosition(6))
        return model
      })()
    )
  })

  it("the bytes depend on the predicate and on the input chunk ids", () => {
    const rewritten = (logSeed: number, salt: number) => {
      const built = buildLog(logSeed)
      replace(built.log, 2, 2, keepByPosition(salt))
      return built.mem.readFileSync(`${DIR}/chunk-000002.000001`)
    }
    expect(rewritten(8, 5).equals(rewritten(8, 5))).toBe(true)
    expect(rewritten(8, 5).equals(rewritten(8, 9))).toBe(false)
    // Same records, other chunk ids (the log's id seed differs): another new chunk id.
    const otherIds = () => {
      const mem = new MemoryDisk()
      const log = openLog(mem.service, logConfig({ chunkSize: CHUNK_SIZE }), 99)
      appendRandom(log, new Prng(8).fork("records"), 5 * CHUNK_SIZE)
      replace(log, 2, 2, keepByPosition(5))
      return log.chunks()[2]!.header.chunkId
    }
    const base = buildLog(8)
    replace(base.log, 2, 2, keepByPosition(5))
    expect(otherIds()).not.toBe(base.log.chunks()[2]!.header.chunkId)
  })
})

describe("replaceChunks: refused ranges", () => {
  const dies = (exit: Exit.Exit<unknown, unknown>, text: string) => {
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    if (Exit.isFailure(exit)) expect(String(Cause.squash(exit.cause))).toContain(text)
  }
  it("never touches the active chunk, and only takes whole completed files", () => {
    const { log, written } = buildLog(9, 4)
    const active = log.chunks()[log.chunks().length - 1]!.header.startNumber
    replace(log, 1, 2, () => true)
    dies(Effect.runSyncExit(log.replaceChunks(active, active, () => true)), "not completed")
    dies(Effect.runSyncExit(log.replaceChunks(0, active, () => true)), "not completed")
    dies(Effect.runSyncExit(log.replaceChunks(2, 3, () => true)), "inside")
    dies(Effect.runSyncExit(log.replaceChunks(0, 1, () => true)), "inside")
    dies(Effect.runSyncExit(log.replaceChunks(active + 5, active + 5, () => true)), "does not exist")
    dies(Effect.runSyncExit(log.replaceChunks(2, 1, () => true)), "not a range")
    checkContent(log, new Model(written))
  })
})

describe("replaceChunks: reads across a switch", () => {
  it("a paged scan continues correctly from a `next` taken before the switch", () => {
    for (const seed of [10, 11]) {
      const { log, written } = buildLog(seed)
      const model = new Model(written)
      const limit = log.writerPosition()
      for (const direction of ["forward", "backward"] as const) {
        const got: Array<number> = []
        let from = direction === "forward" ? 0 : limit
        const switched = new Set<number>()
        for (let guard = 0; guard < 10_000; guard++) {
          const r = Effect.runSync(
            direction === "forward" ? log.scanForward(from, limit, 4) : log.scanBackward(from, limit, 4)
          )
          got.push(...r.records.map((x) => x.logPosition))
          if (r.reachedEnd || r.records.length === 0) break
          from = r.next
          // Replace the chunk the scan is about to continue in (each chunk at most once per direction).
          const n = Math.floor((direction === "forward" ? from : from - 1) / CHUNK_SIZE)
          const chunk = log.chunks().find((c) => c.header.startNumber <= n && n <= c.header.endNumber)!
          if (chunk.footer !== undefined && !switched.has(chunk.header.startNumber)) {
            const keep = keepByPosition(seed * 10 + n)
            model.remove(chunk.header.startNumber, chunk.header.endNumber, keep)
            replace(log, chunk.header.startNumber, chunk.header.endNumber, keep)
            switched.add(chunk.header.startNumber)
          }
        }
        // Every record seen was alive when seen: those removed before the scan reached them are skipped.
        const expected = written.filter((w) => got.includes(w.position)).map((w) => w.position)
        expect(got).toEqual(direction === "forward" ? expected : [...expected].reverse())
        for (const w of model.visible()) expect(got).toContain(w.position)
        expect(new Set(got).size).toBe(got.length)
      }
      checkContent(log, model)
    }
  })

  effectIt.effect(
    "replaced files stay readable through their old handles until a later switch after the grace period",
    () =>
      Effect.gen(function* () {
        const mem = sharedMem
        const log = yield* openTransactionLog(logConfig({ chunkSize: CHUNK_SIZE }), chunkIds(12))
        appendRandom(log, new Prng(12), 5 * CHUNK_SIZE)
        const old = log.chunks()[1]!
        yield* log.replaceChunks(1, 1, keepByPosition(1))
        // A read that picked the old file before the switch can still read it.
        expect((yield* old.handle.read(0, 8)).length).toBe(8)
        yield* TestClock.adjust(RETIRED_HANDLE_GRACE_MILLIS - 1)
        yield* log.replaceChunks(2, 2, keepByPosition(2))
        expect((yield* old.handle.read(0, 8)).length).toBe(8)
        yield* TestClock.adjust(1)
        yield* log.replaceChunks(3, 3, keepByPosition(3))
        const late = yield* Effect.exit(old.handle.read(0, 8))
        expect(Exit.isFailure(late)).toBe(true)
        // Log close closes the rest.
        expect(mem.openHandleCount()).toBeGreaterThan(log.chunks().length + 1)
        yield* log.close
        expect(mem.openHandleCount()).toBe(0)
      }).pipe(
        Effect.provideServiceEffect(
          Disk,
          Effect.sync(() => sharedMem.service)
        )
      )
  )
})

/** The MemoryDisk of the Effect-based test above (created per run of the file; one such test). */
const sharedMem = new MemoryDisk()

describe("replaceChunks: disk errors", () => {
  it("an error at any step fails the replacement or completes it; the log stays usable either way", () => {
    let failed = 0
    let succeeded = 0
    for (let k = 0; k < 200; k++) {
      const { mem, cut, log, written } = buildLog(13, 4)
      const model = new Model(written)
      const keep = keepByPosition(13)
      cut.budget = cut.used + k
      const exit = Effect.runSyncExit(log.replaceChunks(1, 2, keep))
      cut.budget = Number.POSITIVE_INFINITY
      if (Exit.isSuccess(exit)) {
        model.remove(1, 2, keep)
        succeeded++
      } else {
        expect(Cause.isDie(exit.cause)).toBe(false)
        failed++
        expect(log.chunks().map((c) => c.path)).toContain(`${DIR}/chunk-000001.000000`)
      }
      expect(log.failed()).toBeUndefined()
      checkContent(log, model)
      // The writer is not stopped, and the range can be replaced (again) once the disk works.
      const again = sealUnit([written[0]!.record])[0]!
      const batch = writeUnits(log, [{ records: [again] }])
      const r = Effect.runSync(log.readRecord(batch.positions[0]![0]!, log.writerPosition()))
      expect(r !== undefined && sameRecord(r, again, batch.positions[0]![0]!)).toBe(true)
      if (Exit.isFailure(exit)) {
        model.remove(1, 2, keep)
        replace(log, 1, 2, keep)
      }
      // A clean reopen removes whatever the failure left behind and shows the same content.
      Effect.runSync(log.close)
      const reopened = openLog(mem.service, logConfig({ chunkSize: CHUNK_SIZE }))
      const extended = new Model([...written, { record: again, position: batch.positions[0]![0]! }])
      for (const w of written) if (!model.alive.has(w.position)) extended.alive.delete(w.position)
      checkContent(reopened, extended)
      checkFiles(mem, reopened)
      if (Exit.isSuccess(exit) && k > 0 && cut.cutAt === undefined) break
    }
    expect(failed).toBeGreaterThanOrEqual(5)
    expect(succeeded).toBeGreaterThan(0)
  })
})

describe("replaceChunks: files at open", () => {
  it("old files left inside a merged file's range are removed at open", () => {
    const { mem, log, written } = buildLog(14, 5)
    const oldNames = ["chunk-000001.000000", "chunk-000002.000000", "chunk-000003.000000"]
    const oldBytes = oldNames.map((n) => mem.readFileSync(`${DIR}/${n}`))
    const model = new Model(written)
    model.remove(1, 3, keepByPosition(4))
    replace(log, 1, 3, keepByPosition(4))
    Effect.runSync(log.close)
    // A crash between the switch and the removals: the replaced files are back.
    Effect.runSync(
      Effect.gen(function* () {
        for (const [i, name] of oldNames.entries()) {
          const h = yield* mem.service.open(`${DIR}/${name}`, { create: true })
          yield* h.write(0, oldBytes[i]!)
          yield* h.sync
          yield* h.close
        }
        yield* mem.service.syncDir(DIR)
      })
    )
    const reopened = openLog(mem.service, logConfig({ chunkSize: CHUNK_SIZE }))
    checkContent(reopened, model)
    checkFiles(mem, reopened)
    for (const name of oldNames) expect(filesIn(mem)).not.toContain(name)
  })

  it("an older version is kept (and the log refused) when the version replacing it is damaged", () => {
    const { mem, log } = buildLog(17, 4)
    const oldBytes = mem.readFileSync(`${DIR}/chunk-000002.000000`)
    replace(log, 2, 2, keepByPosition(8))
    Effect.runSync(log.close)
    Effect.runSync(
      Effect.gen(function* () {
        const back = yield* mem.service.open(`${DIR}/chunk-000002.000000`, { create: true })
        yield* back.write(0, oldBytes)
        yield* back.sync
        yield* back.close
        yield* mem.service.syncDir(DIR)
        const scavenged = yield* mem.service.open(`${DIR}/chunk-000002.000001`)
        const byte = yield* scavenged.read(HEADER_SIZE + 20, 1)
        yield* scavenged.write(HEADER_SIZE + 20, Buffer.from([byte[0]! ^ 0x10]))
        yield* scavenged.sync
        yield* scavenged.close
      })
    )
    const exit = Effect.runSyncExit(
      Effect.provideService(openTransactionLog(logConfig({ chunkSize: CHUNK_SIZE }), chunkIds(1)), Disk, mem.service)
    )
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) expect(String(Cause.squash(exit.cause))).toContain("checksum mismatch")
    expect(filesIn(mem)).toContain("chunk-000002.000000")
  })

  it("a file overlapping a scavenged file's range partly is reported as corruption, not removed", () => {
    const a = buildLog(15, 5)
    const b = buildLog(15, 5)
    replace(a.log, 0, 1, () => true)
    replace(b.log, 1, 2, () => true)
    Effect.runSync(a.log.close)
    const stray = b.mem.readFileSync(`${DIR}/chunk-000001.000001`)
    Effect.runSync(
      Effect.gen(function* () {
        const h = yield* a.mem.service.open(`${DIR}/chunk-000001.000001`, { create: true })
        yield* h.write(0, stray)
        yield* h.sync
        yield* h.close
        yield* a.mem.service.syncDir(DIR)
      })
    )
    const exit = Effect.runSyncExit(
      Effect.provideService(openTransactionLog(logConfig({ chunkSize: CHUNK_SIZE }), chunkIds(1)), Disk, a.mem.service)
    )
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) expect(String(Cause.squash(exit.cause))).toContain("overlaps")
    expect(filesIn(a.mem)).toContain("chunk-000001.000001")
    expect(filesIn(a.mem)).toContain("chunk-000002.000000")
  })
})

describe("replaceChunks: scans over scavenged chunks", () => {
  it("forward scans with a limit inside a scavenged or merged chunk stop there", () => {
    const { log, written } = buildLog(16, 4)
    const model = new Model(written)
    model.remove(0, 0, keepByPosition(7))
    replace(log, 0, 0, keepByPosition(7))
    replace(log, 0, 1, () => true)
    const visible = model.visible()
    for (const limit of [1, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 500, 2 * CHUNK_SIZE + 3]) {
      const got = Effect.runSync(log.scanForward(0, limit, 10_000)).records.map((r) => r.logPosition)
      expect(got).toEqual(visible.filter((w) => w.position < limit).map((w) => w.position))
    }
    expect(scanForwardAll(log, 2).length).toBe(visible.length)
  })
})

describe("replaceChunks: big chunks", () => {
  it("records straddling read pieces and output larger than a write piece are copied intact, in few writes", () => {
    const mem = new MemoryDisk()
    const cs = 12 * 1024 * 1024
    const log = openLog(mem.service, logConfig({ chunkSize: cs, cacheBytes: 1 << 22 }), 18)
    const prng = new Prng(18)
    const written: Array<{ record: ReturnType<typeof eventOfSize>; position: number }> = []
    // 700 KiB records: pieces of 4 MiB end inside records; a chunk holds about 17 of them.
    while (log.writerPosition() < 2 * cs) {
      const record = eventOfSize(prng, 700 * 1024 + prng.int(0, 1000))
      written.push({ record, position: writeUnits(log, [{ records: [record] }]).positions[0]![0]! })
    }
    const model = new Model(written, cs)
    const writesBefore = mem.stats.writes
    model.remove(0, 0, keepByPosition(1))
    const first = Effect.runSync(log.replaceChunks(0, 0, keepByPosition(1)))
    const merged = Effect.runSync(log.replaceChunks(0, 1, () => true))
    expect(first.kept).toBeGreaterThan(3)
    expect(merged.newBytes).toBeGreaterThan(8 * 1024 * 1024)
    // Sequential pieces of up to 4 MiB: a handful of writes, not one per record.
    expect(mem.stats.writes - writesBefore).toBeLessThanOrEqual(
      Math.ceil((first.newBytes + merged.newBytes) / (4 * 1024 * 1024)) + 4
    )
    checkContent(log, model)
    Effect.runSync(verifyChunkFile(log.chunks()[0]!))
  })

  it("a forward scan whose limit falls before a record longer than the scan span stops at the limit in a merged chunk", () => {
    const mem = new MemoryDisk()
    const cs = 4 * 1024 * 1024
    const log = openLog(mem.service, logConfig({ chunkSize: cs, cacheBytes: 1 << 22 }), 19)
    const prng = new Prng(19)
    const positions: Array<number> = []
    while (log.writerPosition() < 2 * cs)
      positions.push(writeUnits(log, [{ records: [eventOfSize(prng, 600 * 1024)] }]).positions[0]![0]!)
    Effect.runSync(log.replaceChunks(0, 0, () => true))
    Effect.runSync(log.replaceChunks(0, 1, () => true))
    // Limits just after a record's start: the scan may return records below the limit only.
    for (const p of positions.slice(1, 8)) {
      const got = Effect.runSync(log.scanForward(0, p, 10_000)).records.map((r) => r.logPosition)
      expect(got).toEqual(positions.filter((q) => q < p))
      const fromJustBefore = Effect.runSync(
        log.scanForward(positions[positions.indexOf(p) - 1]!, p, 10_000)
      ).records.map((r) => r.logPosition)
      expect(fromJustBefore).toEqual([positions[positions.indexOf(p) - 1]])
    }
  })
})
