/**
 * Table index micro-benchmark: memtable bytes per entry, and the whole index on the real disk (NodeDisk):
 * add rate, flush + merge time, resident bytes per event, lookup rates.
 *
 * Usage: node --expose-gc --import tsx bench/src/tableindex.ts [--quick] [--events N] [--streams S] [--block B] [--dir PATH]
 * Prints one JSON object per line.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Exit, Scope } from "effect"
import { Disk, NodeDisk } from "@vellum/platform"
import { MemTable } from "../../packages/storage/src/tableindex/MemTable.js"
import { streamHash64 } from "../../packages/storage/src/tableindex/StreamHash.js"
import { open } from "../../packages/storage/src/tableindex/TableIndex.js"

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const argValue = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const events = Number(argValue("--events") ?? (quick ? 1_000_000 : 10_000_000))
const indexStreams = Number(argValue("--streams") ?? 100_000)
const entriesPerBlock = argValue("--block") === undefined ? undefined : Number(argValue("--block"))
const baseDir = path.resolve(argValue("--dir") ?? ".bench-data")

const gc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc
  if (g === undefined) throw new Error("run with node --expose-gc")
  g()
  g()
}
const heap = () => {
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}
const now = () => Number(process.hrtime.bigint()) / 1e6
/** CPU milliseconds of this process: on a shared, loaded machine a steadier figure than wall time. */
const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const print = (o: Record<string, unknown>) => console.log(JSON.stringify(o))

/** gc, then give V8 time to free detached ArrayBuffer backing stores (done off-thread) before measuring. */
const settle = async (): Promise<number> => {
  for (let i = 0; i < 5; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return heap()
}

/** Memtable: measured heap growth per entry vs its own estimate. Names are built per add, as a writer would. */
const memtableFigures = async (entries: number, streams: number) => {
  const before = await settle()
  const t0 = now()
  const m = new MemTable(streamHash64)
  for (let i = 0; i < entries; i++) m.add(`stream-${(i * 7919) % streams}`, Math.floor(i / streams), i * 120)
  const addMs = now() - t0
  const measured = (await settle()) - before
  print({
    bench: "memtable",
    entries,
    streams,
    measuredBytesPerEntry: +(measured / entries).toFixed(2),
    estimatedBytesPerEntry: +(m.byteSize() / entries).toFixed(2),
    addsPerS: Math.round(entries / (addMs / 1000))
  })
  return m.entryCount // keep `m` alive until measured
}

const indexFigures = Effect.gen(function* () {
  const dir = path.join(baseDir, "tableindex")
  fs.rmSync(dir, { recursive: true, force: true })
  const before = yield* Effect.promise(settle)
  const scope = yield* Scope.make()
  const index = yield* Effect.provideService(open({ dir, entriesPerBlock }), Scope.Scope, scope)
  const names = Array.from({ length: indexStreams }, (_, i) => `stream-${i}`)
  const next = new Int32Array(indexStreams)
  const batch = 1000
  let peakResident = 0
  const t0 = now()
  for (let at = 0; at < events; at += batch) {
    const entries = []
    for (let i = at; i < Math.min(events, at + batch); i++) {
      const s = (i * 7919) % indexStreams
      entries.push({ stream: names[s]!, eventNumber: next[s]!++, position: i * 120 })
    }
    index.addBatch(entries, Math.min(events, at + batch) * 120)
    // As the writer does: hold while a full memtable still waits for its flush.
    yield* index.awaitCapacity
    if (at % 100_000 === 0) peakResident = Math.max(peakResident, index.stats().residentBytes)
  }
  const addMs = now() - t0
  yield* index.awaitIdle
  const idleMs = now() - t0
  const after = yield* Effect.promise(settle)
  const s = index.stats()
  print({
    bench: "index-build",
    events,
    streams: indexStreams,
    addAndBackgroundS: +(idleMs / 1000).toFixed(2),
    addLoopS: +(addMs / 1000).toFixed(2),
    tables: s.tables,
    levels: s.levels,
    memtableEntries: s.memtableEntries
  })
  print({
    bench: "index-memory",
    events,
    residentBytes: s.residentBytes,
    residentBytesPerEvent: +(s.residentBytes / events).toFixed(3),
    peakResidentBytesPerEvent: +(peakResident / events).toFixed(3),
    measuredHeapBytesPerEvent: +((after - before) / events).toFixed(3),
    note: "measured includes the bench's own stream-name array and counters"
  })

  // Lookups: random streams, cold cache first, then warm.
  const lookups = quick ? 20_000 : 100_000
  const cacheNote = "block cache 4 MiB (default) against this many blocks: cold/warm lookups mostly read the disk"
  print({ bench: "index-lookup-setup", note: cacheNote, blocks: Math.ceil(events / (entriesPerBlock ?? 128)) })
  let x = 12345
  const rnd = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0)
  for (const label of ["latest-cold", "latest-warm"]) {
    const t = now()
    const c = cpu()
    yield* Effect.gen(function* () {
      for (let i = 0; i < lookups; i++) yield* index.latest(names[rnd() % indexStreams]!, 1)
    })
    print({
      bench: "index-lookup",
      case: label,
      lookups,
      perS: Math.round(lookups / ((now() - t) / 1000)),
      cpuMicrosEach: +(((cpu() - c) * 1000) / lookups).toFixed(2)
    })
  }
  {
    // A hot set that fits the block cache: lookups served without a disk read.
    const hot = 200
    for (let i = 0; i < hot; i++) yield* index.latest(names[i]!, 1)
    const t = now()
    const c = cpu()
    yield* Effect.gen(function* () {
      for (let i = 0; i < lookups; i++) yield* index.latest(names[rnd() % hot]!, 1)
    })
    print({
      bench: "index-lookup",
      case: "latest-hot200-cached",
      lookups,
      perS: Math.round(lookups / ((now() - t) / 1000)),
      cpuMicrosEach: +(((cpu() - c) * 1000) / lookups).toFixed(2)
    })
  }
  for (const label of ["range20-cold", "range20-warm"]) {
    const t = now()
    const c = cpu()
    let found = 0
    yield* Effect.gen(function* () {
      for (let i = 0; i < lookups; i++) {
        const s = rnd() % indexStreams
        const from = rnd() % Math.max(1, next[s]! - 20)
        found += (yield* index.range(names[s]!, from, from + 19)).length
      }
    })
    print({
      bench: "index-lookup",
      case: label,
      lookups,
      entriesPerLookup: +(found / lookups).toFixed(1),
      perS: Math.round(lookups / ((now() - t) / 1000)),
      cpuMicrosEach: +(((cpu() - c) * 1000) / lookups).toFixed(2)
    })
  }
  const tm = now()
  yield* index.mergeAll
  print({ bench: "index-mergeAll", events, s: +((now() - tm) / 1000).toFixed(2), tables: index.stats().tables })
  yield* Scope.close(scope, Exit.void)
  fs.rmSync(dir, { recursive: true, force: true })
})

await memtableFigures(1_000_000, 1_000)
await memtableFigures(1_000_000, 100_000)
await memtableFigures(1_000_000, 1_000_000)
await Effect.runPromise(Effect.provideService(indexFigures, Disk, NodeDisk.make))
