/**
 * A failing disk read is a transient I/O error, not damage: it reaches the caller of every read as the
 * disk's own DiskError (IOError), never as StorageCorrupt, and once the disk reads again so does the store.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Either } from "effect"
import { Disk, MemoryDisk } from "@vellum/platform"
import { make, type EventStoreService } from "../src/index.js"
import { baseConfig, evs } from "./streams-harness.js"

const reads: ReadonlyArray<
  readonly [string, (store: EventStoreService) => Effect.Effect<unknown, { readonly _tag: string }>]
> = [
  ["readStreamForward", (store) => store.readStreamForward("s", 0, 20)],
  ["readStreamBackward", (store) => store.readStreamBackward("s", -1, 20)],
  ["readEvent", (store) => store.readEvent("s", 3)],
  ["readAllForward", (store) => store.readAllForward(0, 20)],
  ["readAllBackward", (store) => store.readAllBackward(-1, 20)]
]

describe("streams: a disk read error", () => {
  for (const [name, read] of reads) {
    it.scoped(`${name} fails with the disk's DiskError, not StorageCorrupt`, () =>
      Effect.gen(function* () {
        const mem = new MemoryDisk()
        // Tiny caches: reads go to the disk.
        const config = baseConfig({ readCacheBytes: 0, streamInfoCacheCapacity: 1 })
        const store = yield* make(config).pipe(Effect.provideService(Disk, mem.service))
        yield* store.append("s", -2, evs(1, 10))
        mem.setFaults({ readError: 1 })
        const failed = yield* Effect.either(read(store))
        assert.isTrue(Either.isLeft(failed), "the read failed")
        const error = (failed as Either.Left<{ _tag: string; reason?: string }, unknown>).left
        assert.strictEqual(error._tag, "DiskError", JSON.stringify(error))
        assert.strictEqual(error.reason, "IOError")
        mem.setFaults(undefined)
        assert.isTrue(Either.isRight(yield* Effect.either(read(store))), "the store reads again once the disk does")
      })
    )
  }

  it.scoped("opening a store whose disk fails reads fails with the disk's DiskError, not StorageCorrupt", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const config = baseConfig()
      yield* Effect.scoped(
        Effect.flatMap(make(config).pipe(Effect.provideService(Disk, mem.service)), (store) =>
          store.append("s", -2, evs(1, 10))
        )
      )
      mem.setFaults({ readError: 1 })
      const failed = yield* Effect.either(Effect.scoped(make(config).pipe(Effect.provideService(Disk, mem.service))))
      assert.isTrue(Either.isLeft(failed), "the open failed")
      const error = (failed as Either.Left<{ _tag: string; reason?: string }, unknown>).left
      assert.strictEqual(error._tag, "DiskError", JSON.stringify(error))
      mem.setFaults(undefined)
      assert.isTrue(
        Either.isRight(
          yield* Effect.either(Effect.scoped(make(config).pipe(Effect.provideService(Disk, mem.service))))
        ),
        "it opens once the disk reads"
      )
    })
  )
})
