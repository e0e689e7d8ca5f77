/**
 * npm run bench:storage — the storage engine on the real disk, with its ceilings measured in the same run.
 *
 * Prints, as JSON lines:
 * - the disk's fdatasync calls per second (the ceiling for group commit: every durable batch costs one data
 *   sync; the writer checkpoint is synced lazily, about once per 16 MiB of log);
 * - durable appends per second with 1 and 100 events per append at 1 and 64 concurrent appenders, and the
 *   closed loop's own ceiling without storage (fibers handing events to a batching fiber: handOffCeiling.ts);
 * - one appender's durable appends per second with one fsync per batch and with two (the writer checkpoint
 *   synced with every batch, as before issue 22), in turns;
 * - events per second read forward by stream and over `$all`;
 * - resident index memory per event and open-to-first-read time at 1M and 10M events.
 *
 * Options: --quick (smaller sizes, for a smoke run), --big N (events for the large index figures; default
 * 10,000,000), --dir PATH (default ./.bench-data), --checkpoint-lag BYTES (0: sync the writer checkpoint with
 * every batch, as before one fsync per batch, to compare).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Exit, Scope } from "effect"
import { Disk, NodeDisk } from "@vellum/platform"
import { defaultStorageConfig, make, type EventStoreService, type StorageConfig } from "@vellum/storage"
import { freshDir as freshBenchDir, gc, now, print } from "./benchSupport.js"
import { handOffCeiling } from "./handOffCeiling.js"

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const argValue = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const baseDir = path.resolve(argValue("--dir") ?? ".bench-data")
const bigCount = Number(argValue("--big") ?? (quick ? 200_000 : 10_000_000))
const midCount = quick ? 100_000 : 1_000_000

const freshDir = (name: string) => freshBenchDir(baseDir, name)

/** The ceiling: how many write+fdatasync pairs (the shape of one durable batch's data sync) the disk does. */
const measureFsync = () => {
  const dir = freshDir("fsync")
  const fd = fs.openSync(path.join(dir, "probe"), "w+")
  fs.ftruncateSync(fd, 64 * 1024 * 1024)
  const buf = Buffer.alloc(256, 1)
  const n = quick ? 1000 : 5000
  const start = now()
  for (let i = 0; i < n; i++) {
    fs.writeSync(fd, buf, 0, buf.length, i * buf.length)
    fs.fdatasyncSync(fd)
  }
  const secs = now() - start
  fs.closeSync(fd)
  return n / secs
}

const uuid = (i: number, salt: number) =>
  `${(salt >>> 0).toString(16).padStart(8, "0")}-0000-4000-8000-${i.toString(16).padStart(12, "0")}`

const payload = Buffer.from(JSON.stringify({ orderId: "order-123", amount: 42.5, currency: "EUR", lines: [1, 2, 3] }))
const proposed = (i: number, salt: number) => ({
  eventId: uuid(i, salt),
  eventType: "OrderPlaced",
  isJson: true,
  data: payload,
  metadata: Buffer.alloc(0)
})

/** `--checkpoint-lag 0` syncs the writer checkpoint after every batch: the two-sync batch of before issue 22. */
const checkpointLag = argValue("--checkpoint-lag")

const config = (dir: string, overrides: Partial<StorageConfig> = {}): StorageConfig => ({
  ...defaultStorageConfig(dir),
  ...(checkpointLag !== undefined ? { checkpointLagBytes: Number(checkpointLag) } : {}),
  ...overrides
})

const withStore = <A>(cfg: StorageConfig, f: (store: EventStoreService) => Effect.Effect<A, unknown>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const store = yield* make(cfg).pipe(Scope.extend(scope))
    const result = yield* f(store)
    yield* Scope.close(scope, Exit.void)
    return result
  })

let salt = 1

const appendRate = (
  eventsPerAppend: number,
  appenders: number,
  totalEvents: number,
  overrides: Partial<StorageConfig> = {}
) =>
  withStore(config(freshDir(`append-${eventsPerAppend}x${appenders}`), overrides), (store) =>
    Effect.gen(function* () {
      const appendsPerAppender = Math.max(1, Math.floor(totalEvents / eventsPerAppend / appenders))
      const s = salt++
      const start = now()
      yield* Effect.forEach(
        Array.from({ length: appenders }, (_, a) => a),
        (a) =>
          Effect.gen(function* () {
            for (let k = 0; k < appendsPerAppender; k++) {
              const base = (a * appendsPerAppender + k) * eventsPerAppend
              const events = Array.from({ length: eventsPerAppend }, (_, j) => proposed(base + j, s))
              yield* store.append(`stream-${a}-${k % 100}`, -2, events)
            }
          }),
        { concurrency: "unbounded", discard: true }
      )
      const secs = now() - start
      const events = appendsPerAppender * appenders * eventsPerAppend
      return { events, secs, eventsPerSec: events / secs, appendsPerSec: events / eventsPerAppend / secs }
    })
  )

/** Fills a store with `count` events over `streams` streams in 100-event appends (64 appenders). */
const fill = (store: EventStoreService, count: number, streams: number) =>
  Effect.gen(function* () {
    const s = salt++
    const appenders = 64
    const perAppend = 100
    const appends = Math.ceil(count / perAppend)
    let next = 0
    yield* Effect.forEach(
      Array.from({ length: appenders }, (_, a) => a),
      () =>
        Effect.gen(function* () {
          while (true) {
            const k = next++
            if (k >= appends) return
            const events = Array.from({ length: perAppend }, (_, j) => proposed(k * perAppend + j, s))
            yield* store.append(`stream-${k % streams}`, -2, events)
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
  })

const readForwardRate = (store: EventStoreService, streams: number, eventsToRead: number) =>
  Effect.gen(function* () {
    let read = 0
    const start = now()
    for (let s = 0; read < eventsToRead && s < streams; s++) {
      let from = 0
      while (true) {
        const r = yield* store.readStreamForward(`stream-${s}`, from, 1000)
        if (r._tag !== "Success") break
        read += r.events.length
        if (r.isEndOfStream) break
        from = r.nextEventNumber
      }
    }
    return read / (now() - start)
  })

const readAllRate = (store: EventStoreService, eventsToRead: number) =>
  Effect.gen(function* () {
    let read = 0
    let position = 0
    const start = now()
    while (read < eventsToRead) {
      const r = yield* store.readAllForward(position, 4096)
      read += r.events.length
      position = r.nextPosition
      if (r.isEnd) break
    }
    return read / (now() - start)
  })

/** Resident memory of the index (the store's own estimate and the process's measured growth). */
const indexFigures = (count: number) =>
  Effect.gen(function* () {
    const dir = freshDir(`index-${count}`)
    const streams = Math.max(1, Math.floor(count / 100))
    gc()
    const before = process.memoryUsage()
    yield* withStore(config(dir), (store) =>
      Effect.gen(function* () {
        const start = now()
        yield* fill(store, count, streams)
        print({ bench: "fill", events: count, streams, secs: +(now() - start).toFixed(2) })
        gc()
        const after = process.memoryUsage()
        const stats = store.stats()
        print({
          bench: "index-memory",
          events: count,
          indexResidentBytes: stats.index.residentBytes,
          indexBytesPerEvent: +(stats.index.residentBytes / count).toFixed(2),
          memtableEntries: stats.index.memtableEntries,
          tables: stats.index.tables,
          processGrowthBytesPerEvent: +(
            (after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)) /
            count
          ).toFixed(2),
          readCacheBytes: stats.readCache.residentBytes
        })
        const fwd = yield* readForwardRate(store, streams, Math.min(count, 2_000_000))
        const all = yield* readAllRate(store, Math.min(count, 2_000_000))
        print({
          bench: "read",
          events: count,
          forwardByStreamEventsPerSec: Math.round(fwd),
          allForwardEventsPerSec: Math.round(all)
        })
      })
    )
    // Restart without flushing the index (as after a crash): the open replays the log the index's tables
    // do not cover yet — up to one memtable of events.
    const timeToFirstRead = () => {
      const start = now()
      return withStore(config(dir), (store) =>
        Effect.map(store.readStreamBackward("stream-1", -1, 1), () => ({ secs: now() - start, store }))
      )
    }
    const replayed = yield* timeToFirstRead()
    print({ bench: "open-to-first-read", events: count, afterCrash: true, secs: +replayed.secs.toFixed(3) })
    // A clean stop flushes the index, so the next open replays nothing.
    yield* withStore(config(dir), (store) => store.flushIndex)
    const clean = yield* timeToFirstRead()
    print({ bench: "open-to-first-read", events: count, afterCleanStop: true, secs: +clean.secs.toFixed(3) })
  })

const main = Effect.gen(function* () {
  const fsyncs = measureFsync()
  print({
    bench: "ceiling",
    fdatasyncPerSec: Math.round(fsyncs),
    note: "each durable batch costs one data sync (the writer checkpoint is synced lazily)"
  })
  const total = quick ? 20_000 : 200_000
  // Run twice: the first run is the JIT's warm-up (the storage runs below come after warmed-up code too).
  yield* handOffCeiling(64, Math.floor(total / 64), (i) => [proposed(i, 0)])
  const handOff = yield* handOffCeiling(64, Math.floor(total / 64), (i) => [proposed(i, 0)])
  print({
    bench: "ceiling",
    handOffPerSec: Math.round(handOff),
    note: "64 fibers building one event and handing it to a batching fiber answered once per event-loop turn: no storage at all"
  })
  for (const [perAppend, appenders] of [
    [1, 1],
    [1, 64],
    [100, 1],
    [100, 64]
  ] as const) {
    const n =
      perAppend === 1 && appenders === 1
        ? Math.min(total, quick ? 2000 : 10_000)
        : perAppend === 100
          ? total * 5
          : total
    const r = yield* appendRate(perAppend, appenders, n)
    print({
      bench: "append",
      eventsPerAppend: perAppend,
      appenders,
      events: r.events,
      eventsPerSec: Math.round(r.eventsPerSec),
      appendsPerSec: Math.round(r.appendsPerSec),
      batchesCeilingRatio: +(r.appendsPerSec / fsyncs).toFixed(2),
      ...(perAppend === 1 && appenders === 64 ? { handOffCeilingRatio: +(r.appendsPerSec / handOff).toFixed(2) } : {})
    })
  }
  // One fsync per batch against the two of before (the checkpoint synced with every batch), one appender, in
  // turns so that the disk's changing load (a shared machine) falls on both alike; medians of the turns.
  const turns = quick ? 5 : 9
  const twoSyncs: Array<number> = []
  const oneSync: Array<number> = []
  for (let t = 0; t < turns; t++) {
    twoSyncs.push((yield* appendRate(1, 1, quick ? 500 : 2000, { checkpointLagBytes: 0 })).appendsPerSec)
    oneSync.push((yield* appendRate(1, 1, quick ? 500 : 2000)).appendsPerSec)
  }
  const median = (xs: Array<number>) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!
  print({
    bench: "append-syncs",
    eventsPerAppend: 1,
    appenders: 1,
    turns,
    twoSyncsAppendsPerSec: Math.round(median(twoSyncs)),
    oneSyncAppendsPerSec: Math.round(median(oneSync)),
    ratio: +(median(oneSync) / median(twoSyncs)).toFixed(2)
  })
  yield* indexFigures(midCount)
  if (bigCount > midCount) yield* indexFigures(bigCount)
  fs.rmSync(baseDir, { recursive: true, force: true })
})

Effect.runPromise(main.pipe(Effect.provideService(Disk, NodeDisk.make))).catch((e) => {
  console.error(e)
  process.exit(1)
})
