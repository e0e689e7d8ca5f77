// The Disk port's contract, run against every implementation (NodeDisk.test.ts, MemoryDisk.test.ts).
import { Cause, Effect, Exit, Option } from "effect"
import { describe, expect, it } from "vitest"
import { type DiskErrorReason, type DiskService, DiskError, join } from "../src/Disk.js"

export interface DiskFixture {
  readonly disk: DiskService
  /** An existing, empty directory to work in. */
  readonly root: string
}

const run = <A>(effect: Effect.Effect<A, DiskError>): Promise<A> => Effect.runPromise(effect)

/** The typed failure of `effect` (never a defect); fails the test when it succeeds or dies. */
export const failure = async <A>(effect: Effect.Effect<A, DiskError>): Promise<DiskError> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected a DiskError, got success ${String(exit.value)}`)
  const error = Cause.failureOption(exit.cause)
  if (Option.isNone(error)) throw new Error(`expected a typed DiskError, got ${Cause.pretty(exit.cause)}`)
  expect(error.value).toBeInstanceOf(DiskError)
  return error.value
}

export const expectReason = async <A>(
  effect: Effect.Effect<A, DiskError>,
  reason: DiskErrorReason
): Promise<DiskError> => {
  const error = await failure(effect)
  expect(error._tag).toBe("DiskError")
  expect(error.reason).toBe(reason)
  return error
}

const bytes = (s: string): Buffer => Buffer.from(s, "utf8")

export const diskContract = (name: string, setup: () => DiskFixture, teardown?: () => void) =>
  describe(`Disk contract: ${name}`, () => {
    let disk: DiskService
    let root: string
    const at = (...parts: Array<string>) => join(root, ...parts)
    const fresh = () => {
      teardown?.()
      const fixture = setup()
      disk = fixture.disk
      root = fixture.root
    }

    it("open: NotFound without create, create, exclusive", async () => {
      fresh()
      const e = await expectReason(disk.open(at("a")), "NotFound")
      expect(e.op).toBe("open")
      expect(e.path).toBe(at("a"))
      const h = await run(disk.open(at("a"), { create: true, exclusive: true }))
      await run(h.write(0, bytes("hello")))
      await run(h.close)
      await expectReason(disk.open(at("a"), { create: true, exclusive: true }), "AlreadyExists")
      const again = await run(disk.open(at("a"), { create: true }))
      expect((await run(again.read(0, 5))).toString()).toBe("hello")
      await run(again.close)
      await expectReason(disk.open(at("missing-dir", "x"), { create: true }), "NotFound")
    })

    it("positional read and write, growing with zeros", async () => {
      fresh()
      const h = await run(disk.open(at("f"), { create: true }))
      await run(h.write(0, bytes("abc")))
      await run(h.write(6, bytes("xyz")))
      expect(await run(h.size)).toBe(9)
      expect([...(await run(h.read(0, 9)))]).toEqual([...bytes("abc"), 0, 0, 0, ...bytes("xyz")])
      await run(h.write(1, bytes("B")))
      expect((await run(h.read(0, 3))).toString()).toBe("aBc")
      await run(h.write(100, new Uint8Array(0)))
      expect(await run(h.size)).toBe(9)
      await run(h.close)
    })

    it("append returns the positions written at", async () => {
      fresh()
      const h = await run(disk.open(at("log"), { create: true }))
      expect(await run(h.append(bytes("one")))).toBe(0)
      expect(await run(h.append(bytes("two")))).toBe(3)
      await run(h.write(6, bytes("!")))
      expect(await run(h.append(bytes("three")))).toBe(7)
      expect((await run(h.read(0, 100))).toString()).toBe("onetwo!three")
      await run(h.close)
      const reopened = await run(disk.open(at("log")))
      expect(await run(reopened.append(bytes("4")))).toBe(12)
      await run(reopened.close)
    })

    it("read past EOF returns a short buffer", async () => {
      fresh()
      const h = await run(disk.open(at("f"), { create: true }))
      await run(h.write(0, bytes("0123456789")))
      const short = await run(h.read(8, 10))
      expect(Buffer.isBuffer(short)).toBe(true)
      expect(short.toString()).toBe("89")
      expect((await run(h.read(10, 4))).length).toBe(0)
      expect((await run(h.read(50, 4))).length).toBe(0)
      expect((await run(h.read(3, 0))).length).toBe(0)
      await run(h.close)
    })

    it("truncate shrinks and grows with zeros", async () => {
      fresh()
      const h = await run(disk.open(at("f"), { create: true }))
      await run(h.write(0, bytes("abcdef")))
      await run(h.truncate(2))
      expect(await run(h.size)).toBe(2)
      await run(h.truncate(5))
      expect([...(await run(h.read(0, 10)))]).toEqual([...bytes("ab"), 0, 0, 0])
      expect(await run(h.append(bytes("z")))).toBe(5)
      await run(h.close)
    })

    it("list is sorted; mkdir is recursive and idempotent", async () => {
      fresh()
      for (const n of ["b", "a", "c10", "c2"])
        await run(Effect.flatMap(disk.open(at(n), { create: true }), (h) => h.close))
      await run(disk.mkdir(at("sub", "deep")))
      await run(disk.mkdir(at("sub", "deep")))
      expect(await run(disk.list(root))).toEqual(["a", "b", "c10", "c2", "sub"])
      expect(await run(disk.list(at("sub")))).toEqual(["deep"])
      expect(await run(disk.list(at("sub", "deep")))).toEqual([])
      await expectReason(disk.list(at("nope")), "NotFound")
      await expectReason(disk.mkdir(at("a")), "AlreadyExists")
    })

    it("rename replaces the target", async () => {
      fresh()
      const a = await run(disk.open(at("a"), { create: true }))
      await run(a.write(0, bytes("new")))
      const b = await run(disk.open(at("b"), { create: true }))
      await run(b.write(0, bytes("old-content")))
      await run(Effect.zip(a.close, b.close))
      await run(disk.rename(at("a"), at("b")))
      expect(await run(disk.exists(at("a")))).toBe(false)
      expect(await run(disk.list(root))).toEqual(["b"])
      const h = await run(disk.open(at("b"), { readOnly: true }))
      expect((await run(h.read(0, 100))).toString()).toBe("new")
      await run(h.close)
      await expectReason(disk.rename(at("a"), at("c")), "NotFound")
    })

    it("remove and exists", async () => {
      fresh()
      await run(Effect.flatMap(disk.open(at("f"), { create: true }), (h) => h.close))
      expect(await run(disk.exists(at("f")))).toBe(true)
      await run(disk.remove(at("f")))
      expect(await run(disk.exists(at("f")))).toBe(false)
      expect(await run(disk.exists(at("f", "under-a-missing-file")))).toBe(false)
      await expectReason(disk.remove(at("f")), "NotFound")
      await run(disk.mkdir(at("d", "e")))
      await expectReason(disk.remove(at("d")), "InvalidArgument")
      await run(disk.remove(at("d", "e")))
      await run(disk.remove(at("d")))
      expect(await run(disk.exists(at("d")))).toBe(false)
    })

    it("read-only handles reject writes; closed handles fail with Closed", async () => {
      fresh()
      const w = await run(disk.open(at("f"), { create: true }))
      await run(w.write(0, bytes("data")))
      await run(w.close)
      const r = await run(disk.open(at("f"), { readOnly: true }))
      await expectReason(r.write(0, bytes("x")), "InvalidArgument")
      await expectReason(r.append(bytes("x")), "InvalidArgument")
      await expectReason(r.truncate(0), "InvalidArgument")
      expect((await run(r.read(0, 4))).toString()).toBe("data")
      await run(r.close)
      await expectReason(r.read(0, 4), "Closed")
      await expectReason(r.size, "Closed")
      await expectReason(w.write(0, bytes("x")), "Closed")
      await expectReason(w.sync, "Closed")
    })

    it("rejects invalid arguments and directories as files", async () => {
      fresh()
      const h = await run(disk.open(at("f"), { create: true }))
      await expectReason(h.read(-1, 4), "InvalidArgument")
      await expectReason(h.write(1.5, bytes("x")), "InvalidArgument")
      await expectReason(h.truncate(-3), "InvalidArgument")
      await run(h.close)
      await run(disk.mkdir(at("dir")))
      await expectReason(disk.open(at("dir")), "InvalidArgument")
      await expectReason(disk.open(at("dir"), { readOnly: true }), "InvalidArgument")
    })

    it("sync and syncDir succeed on live files and directories", async () => {
      fresh()
      const h = await run(disk.open(at("f"), { create: true }))
      await run(h.append(bytes("durable")))
      await run(h.sync)
      await run(disk.syncDir(root))
      await run(h.close)
      await expectReason(disk.syncDir(at("missing")), "NotFound")
    })

    it("lock: one holder per directory until released; other directories are independent", async () => {
      fresh()
      await run(disk.mkdir(at("db")))
      await run(disk.mkdir(at("other")))
      const held = await run(disk.lock(at("db")))
      const second = await expectReason(disk.lock(at("db")), "Locked")
      expect(second.op).toBe("lock")
      expect(second.message).toContain(held.path)
      // The same directory spelled another way is the same lock.
      await expectReason(disk.lock(`${at("db")}/`), "Locked")
      const other = await run(disk.lock(at("other")))
      await run(held.release)
      const again = await run(disk.lock(at("db")))
      // A second release of a lock given up is harmless and leaves the new holder alone.
      await run(held.release)
      await expectReason(disk.lock(at("db")), "Locked")
      await run(again.release)
      await run(other.release)
      await expectReason(disk.lock(at("missing")), "NotFound")
    })
  })
