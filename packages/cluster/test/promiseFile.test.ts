// The vote promise survives power loss once kept; a write torn by a crash leaves the previous promise.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { Disk, MemoryDisk, Prng } from "@vellum/platform"
import { PromiseFile } from "../src/index.js"

const open = (disk: MemoryDisk) =>
  Effect.runSync(
    Effect.scoped(
      Effect.provide(
        Effect.gen(function* () {
          yield* Effect.ignore(Effect.flatMap(Disk, (d) => d.mkdir("/db")))
          const file = yield* PromiseFile.openPromiseFile("/db")
          return { promise: file.promise, keep: file.keep }
        }),
        Layer.succeed(Disk, disk.service)
      )
    )
  )

const keep = (disk: MemoryDisk, promise: { term: number; votedFor: string | undefined }) =>
  Effect.runSync(
    Effect.scoped(
      Effect.provide(
        Effect.flatMap(PromiseFile.openPromiseFile("/db"), (file) => file.keep(promise)),
        Layer.succeed(Disk, disk.service)
      )
    )
  )

describe("the vote promise file", () => {
  it("a new node has promised nothing; a kept promise survives every kind of power loss", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const disk = new MemoryDisk({ prng: new Prng(seed) })
      expect(open(disk).promise).toEqual({ term: 0, votedFor: undefined })
      keep(disk, { term: 3, votedFor: "n2" })
      keep(disk, { term: 4, votedFor: undefined })
      keep(disk, { term: 4, votedFor: "n1" })
      disk.crash(new Prng(seed), seed % 2 === 0 ? "strict" : "random")
      expect(open(disk).promise, `seed ${seed}`).toEqual({ term: 4, votedFor: "n1" })
    }
  })

  it("a promise written but not synced is, after a crash, the new one or the previous one, never a damaged one", () => {
    // The bytes `keep` writes for a second promise (slot 0), taken from a scratch disk.
    const scratch = new MemoryDisk({ prng: new Prng(0) })
    open(scratch)
    keep(scratch, { term: 7, votedFor: "n3" })
    keep(scratch, { term: 8, votedFor: "n1" })
    const slot = Effect.runSync(
      Effect.scoped(
        Effect.provide(
          Effect.flatMap(Disk, (d) => Effect.flatMap(d.open("/db/election.chk"), (h) => h.read(0, 256))),
          Layer.succeed(Disk, scratch.service)
        )
      )
    )
    const seen = new Set<number>()
    for (let seed = 1; seed <= 60; seed++) {
      const disk = new MemoryDisk({ prng: new Prng(seed) })
      open(disk)
      keep(disk, { term: 7, votedFor: "n3" })
      // The same write `keep` would make, without its sync: a crash may keep it, tear it or drop it.
      Effect.runSync(
        Effect.scoped(
          Effect.provide(
            Effect.flatMap(Disk, (d) => Effect.flatMap(d.open("/db/election.chk"), (h) => h.write(0, slot))),
            Layer.succeed(Disk, disk.service)
          )
        )
      )
      disk.crash(new Prng(seed), "random")
      const after = open(disk).promise
      expect([7, 8], `seed ${seed}`).toContain(after.term)
      expect(after.votedFor).toBe(after.term === 7 ? "n3" : "n1")
      seen.add(after.term)
    }
    // Both outcomes happen: the test reaches the dropped or torn write and the kept one.
    expect([...seen].sort()).toEqual([7, 8])
  })
})
