import { Effect } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Disk, type DiskError, type FileHandle } from "../src/Disk.js"
import { MemoryDisk } from "../src/MemoryDisk.js"
import { Prng } from "../src/Prng.js"
import { diskContract, expectReason } from "./diskContract.js"

diskContract("MemoryDisk (absolute root)", () => {
  const disk = new MemoryDisk()
  Effect.runSync(disk.service.mkdir("/data"))
  return { disk: disk.service, root: "/data" }
})
diskContract("MemoryDisk (relative root)", () => {
  const disk = new MemoryDisk()
  Effect.runSync(disk.service.mkdir("data/node-1"))
  return { disk: disk.service, root: "data/node-1" }
})

const run = <A>(effect: Effect.Effect<A, DiskError>): A => Effect.runSync(effect)
const b = (s: string) => Buffer.from(s)

/** A disk with /d created and a file holding `synced` (synced, dir-synced) and then `unsynced` appended. */
const setup = (synced: string, unsynced = "") => {
  const disk = new MemoryDisk()
  const s = disk.service
  run(s.mkdir("/d"))
  const h = run(s.open("/d/f", { create: true }))
  run(h.append(b(synced)))
  run(h.sync)
  run(s.syncDir("/d"))
  if (unsynced.length > 0) run(h.append(b(unsynced)))
  return { disk, s, h }
}

describe("MemoryDisk durability", () => {
  it("MemoryDisk.layer provides the given disk, or a fresh one per build", async () => {
    const disk = new MemoryDisk()
    await Effect.runPromise(Effect.flatMap(Disk, (d) => d.mkdir("/x")).pipe(Effect.provide(MemoryDisk.layer(disk))))
    expect(run(disk.service.exists("/x"))).toBe(true)
    const fresh = MemoryDisk.layer()
    const seen = await Effect.runPromise(Effect.flatMap(Disk, (d) => d.list("/")).pipe(Effect.provide(fresh)))
    expect(seen).toEqual([])
  })

  it("a crash releases directory locks (their holder died); the dead holder's release leaves the new one", async () => {
    const { disk, s } = setup("x")
    const first = run(s.lock("/d"))
    expect(disk.lockedDirs()).toEqual(["/d"])
    await expectReason(s.lock("d"), "Locked")
    disk.crash(new Prng(1), "strict")
    expect(disk.lockedDirs()).toEqual([])
    const second = run(s.lock("/d"))
    run(first.release)
    expect(disk.lockedDirs()).toEqual(["/d"])
    run(second.release)
    expect(disk.lockedDirs()).toEqual([])
  })

  it("a strict crash drops unsynced bytes and keeps synced ones", () => {
    const { disk, h } = setup("synced|", "lost")
    expect(disk.readFileSync("/d/f").toString()).toBe("synced|lost")
    expect(disk.durableBytes("/d/f").toString()).toBe("synced|")
    expect(disk.unsyncedOps("d/f")).toBe(1)
    const summary = disk.crash(new Prng(1), "strict")
    expect(summary).toMatchObject({ mode: "strict", handlesInvalidated: 1, opsDropped: 1, opsKept: 0 })
    expect(disk.readFileSync("/d/f").toString()).toBe("synced|")
    expect(disk.unsyncedOps("/d/f")).toBe(0)
    void h
  })

  it("a bit flipped at rest changes the stored bytes, durable ones included, and flips back; not over unsynced ones", () => {
    const { disk, s, h } = setup("synced")
    disk.flipBitAtRest("/d/f", 1, 0)
    expect(disk.readFileSync("/d/f").toString()).toBe("sxnced")
    expect(disk.durableBytes("/d/f").toString()).toBe("sxnced")
    expect(run(h.read(0, 6)).toString()).toBe("sxnced")
    expect(disk.stats.damagedAtRest).toBe(1)
    disk.flipBitAtRest("/d/f", 1, 0)
    expect(() => disk.flipBitAtRest("/d/f", 99, 0)).toThrow(/no bit/)
    disk.crash(new Prng(1), "strict")
    expect(disk.readFileSync("/d/f").toString()).toBe("synced")
    const again = run(s.open("/d/f"))
    run(again.append(b("!")))
    expect(() => disk.flipBitAtRest("/d/f", 0, 0)).toThrow(/unsynced/)
  })

  it("a sync that takes time: a crash during it leaves the write unsynced, and the file is reported as syncing", async () => {
    const { disk, h } = setup("synced|", "pending")
    disk.syncMillis = 5
    const fiber = Effect.runFork(h.sync)
    await Effect.runPromise(Effect.yieldNow())
    expect(disk.syncingFiles()).toEqual(["/d/f"])
    // Power lost before the sync's time was up: the write is still unsynced.
    const summary = disk.crash(new Prng(1), "strict")
    expect(summary.opsDropped).toBe(1)
    expect(disk.syncingFiles()).toEqual([])
    expect(disk.readFileSync("/d/f").toString()).toBe("synced|")
    await Effect.runPromise(fiber.await)
  })

  it("a truncate after the last sync is undone by a strict crash", () => {
    const { disk, h } = setup("0123456789")
    run(h.truncate(3))
    disk.crash(new Prng(1), "strict")
    expect(disk.readFileSync("/d/f").toString()).toBe("0123456789")
  })

  it("old handles fail with Closed after a crash; new ones work", async () => {
    const { disk, s, h } = setup("abc")
    disk.crash(new Prng(7))
    expect(disk.openHandleCount()).toBe(0)
    await expectReason(h.read(0, 3), "Closed")
    await expectReason(h.append(b("x")), "Closed")
    await expectReason(h.sync, "Closed")
    await expectReason(h.close, "Closed")
    const again = run(s.open("/d/f"))
    expect(run(again.read(0, 3)).toString()).toBe("abc")
  })

  it("a file created without syncDir vanishes in a strict crash, and may in a random one", () => {
    const outcomes = new Set<boolean>()
    for (let seed = 0; seed < 32; seed++) {
      const { disk, s } = setup("x")
      run(Effect.flatMap(s.open("/d/new", { create: true }), (h) => h.close))
      disk.crash(new Prng(seed))
      outcomes.add(run(s.exists("/d/new")))
      expect(run(s.exists("/d/f"))).toBe(true)
    }
    expect([...outcomes].sort()).toEqual([false, true])
    const { disk, s } = setup("x")
    run(Effect.flatMap(s.open("/d/new", { create: true }), (h) => h.close))
    expect(disk.durableFiles()).toEqual(["/d/f"])
    disk.crash(new Prng(0), "strict")
    expect(disk.files()).toEqual(["/d/f"])
  })

  it("after syncDir a created file survives a strict crash", () => {
    const { disk, s } = setup("x")
    run(Effect.flatMap(s.open("/d/new", { create: true }), (h) => h.close))
    run(s.syncDir("d"))
    disk.crash(new Prng(0), "strict")
    expect(disk.files()).toEqual(["/d/f", "/d/new"])
  })

  it("rename and remove without syncDir may revert; with syncDir they stick", () => {
    const seen = new Set<string>()
    for (let seed = 0; seed < 32; seed++) {
      const { disk, s } = setup("content")
      run(s.rename("/d/f", "/d/g"))
      disk.crash(new Prng(seed))
      seen.add(disk.files().join(","))
      for (const f of disk.files()) expect(disk.readFileSync(f).toString()).toBe("content")
    }
    // Each entry change is independent: the old name, the new one, both or neither.
    expect([...seen].sort()).toEqual(["", "/d/f", "/d/f,/d/g", "/d/g"])

    const strict = setup("content")
    run(strict.s.rename("/d/f", "/d/g"))
    strict.disk.crash(new Prng(0), "strict")
    expect(strict.disk.files()).toEqual(["/d/f"])

    const synced = setup("content")
    run(synced.s.rename("/d/f", "/d/g"))
    run(synced.s.syncDir("/d"))
    synced.disk.crash(new Prng(0), "strict")
    expect(synced.disk.files()).toEqual(["/d/g"])

    const removed = setup("content")
    run(removed.s.remove("/d/f"))
    removed.disk.crash(new Prng(0), "strict")
    expect(removed.disk.readFileSync("/d/f").toString()).toBe("content")
  })

  it("directories are durable at once", () => {
    const disk = new MemoryDisk()
    run(disk.service.mkdir("/a/b/c"))
    disk.crash(new Prng(3), "strict")
    expect(run(disk.service.list("/a/b"))).toEqual(["c"])
  })

  it("the same seed gives the same post-crash state; different seeds differ", () => {
    const scenario = (seed: number) => {
      const disk = new MemoryDisk()
      const s = disk.service
      run(s.mkdir("/d"))
      for (let i = 0; i < 6; i++) {
        const h = run(s.open(`/d/f${i}`, { create: true }))
        for (let j = 0; j < 8; j++) run(h.append(Buffer.alloc(10 + j, 65 + j)))
        if (i % 3 === 0) run(h.sync)
        if (i === 2) run(s.syncDir("/d"))
      }
      const summary = disk.crash(new Prng(seed))
      return JSON.stringify({ summary, files: disk.files().map((f) => [f, disk.readFileSync(f).toString("hex")]) })
    }
    for (let seed = 0; seed < 8; seed++) expect(scenario(seed)).toBe(scenario(seed))
    expect(new Set(Array.from({ length: 8 }, (_, seed) => scenario(seed))).size).toBeGreaterThan(1)
  })

  it("stats and totalBytes", () => {
    const { disk, h } = setup("abc", "de")
    run(h.read(0, 10))
    expect(disk.totalBytes()).toBe(5)
    expect(disk.stats).toMatchObject({ reads: 1, writes: 2, syncs: 1, dirSyncs: 1, bytesWritten: 5, faultsInjected: 0 })
  })
})

// ---- property: a random crash keeps, per file, the durable content plus a prefix of the unsynced ops ----

type ModelOp =
  | { readonly tag: "write"; readonly file: number; readonly position: number; readonly data: ReadonlyArray<number> }
  | { readonly tag: "append"; readonly file: number; readonly data: ReadonlyArray<number> }
  | { readonly tag: "truncate"; readonly file: number; readonly length: number }
  | { readonly tag: "sync"; readonly file: number }

/** A write or truncate as resolved at the time it ran (appends become writes at the then-current end). */
type Applied = { readonly position: number; readonly data: ReadonlyArray<number> } | { readonly length: number }

const apply = (content: Array<number>, op: Applied): Array<number> => {
  const next = [...content]
  if ("length" in op) {
    next.length = op.length
    return Array.from(next, (x) => x ?? 0)
  }
  if (op.data.length === 0) return next
  while (next.length < op.position) next.push(0)
  op.data.forEach((x, i) => (next[op.position + i] = x))
  return next
}

/** Every content a crash may leave: durable + ops[0..k) for each k, with the last write possibly torn. */
const allowed = (durable: Array<number>, ops: ReadonlyArray<Applied>): Set<string> => {
  const out = new Set<string>()
  let content = durable
  out.add(content.join(","))
  for (const op of ops) {
    if (!("length" in op)) {
      for (let t = 0; t < op.data.length; t++)
        out.add(apply(content, { position: op.position, data: op.data.slice(0, t) }).join(","))
    }
    content = apply(content, op)
    out.add(content.join(","))
  }
  return out
}

const opArb: fc.Arbitrary<ModelOp> = fc.oneof(
  fc.record({
    tag: fc.constant("write" as const),
    file: fc.nat(2),
    position: fc.nat(40),
    data: fc.array(fc.nat(255), { minLength: 1, maxLength: 12 })
  }),
  fc.record({
    tag: fc.constant("append" as const),
    file: fc.nat(2),
    data: fc.array(fc.nat(255), { minLength: 1, maxLength: 12 })
  }),
  fc.record({ tag: fc.constant("truncate" as const), file: fc.nat(2), length: fc.nat(50) }),
  fc.record({ tag: fc.constant("sync" as const), file: fc.nat(2) })
)

describe("MemoryDisk crash property", () => {
  it("each file ends as durable content plus a (possibly torn) prefix of its unsynced ops", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.integer(), fc.boolean(), (ops, seed, strict) => {
        const disk = new MemoryDisk()
        const s = disk.service
        run(s.mkdir("/d"))
        const handles: Array<FileHandle> = [0, 1, 2].map((i) => run(s.open(`/d/f${i}`, { create: true })))
        run(s.syncDir("/d"))
        const model = [0, 1, 2].map(() => ({
          current: [] as Array<number>,
          durable: [] as Array<number>,
          log: [] as Array<Applied>
        }))
        for (const op of ops) {
          const m = model[op.file]!
          const h = handles[op.file]!
          let applied: Applied
          if (op.tag === "sync") {
            run(h.sync)
            m.durable = m.current
            m.log = []
            continue
          } else if (op.tag === "write") {
            run(h.write(op.position, Uint8Array.from(op.data)))
            applied = { position: op.position, data: op.data }
          } else if (op.tag === "append") {
            expect(run(h.append(Uint8Array.from(op.data)))).toBe(m.current.length)
            applied = { position: m.current.length, data: op.data }
          } else {
            run(h.truncate(op.length))
            applied = { length: op.length }
          }
          m.current = apply(m.current, applied)
          m.log.push(applied)
        }
        model.forEach((m, i) => expect([...disk.readFileSync(`/d/f${i}`)]).toEqual(m.current))
        disk.crash(new Prng(seed), strict ? "strict" : "random")
        model.forEach((m, i) => {
          const after = [...disk.readFileSync(`/d/f${i}`)]
          if (strict) expect(after).toEqual(m.durable)
          else expect(allowed(m.durable, m.log).has(after.join(","))).toBe(true)
          // What survived is now durable.
          expect([...disk.durableBytes(`/d/f${i}`)]).toEqual(after)
        })
      }),
      { numRuns: 300 }
    )
  })

  it("random crashes do keep some unsynced ops and tear some writes", () => {
    let kept = 0
    let torn = 0
    for (let seed = 0; seed < 50; seed++) {
      const { disk } = setup("base", "")
      const h = run(disk.service.open("/d/f"))
      for (let i = 0; i < 4; i++) run(h.append(b("0123456789")))
      const summary = disk.crash(new Prng(seed))
      kept += summary.opsKept
      torn += summary.tornWrites
    }
    expect(kept).toBeGreaterThan(0)
    expect(torn).toBeGreaterThan(0)
  })
})
