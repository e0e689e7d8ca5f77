/**
 * A full disk heals: appends fail with StorageFailed (DiskFull, no path in the message) while it is full,
 * the store says writes are refused, and once space is freed the writer's retried recovery lets appends in
 * again — no restart, nothing acknowledged lost, nothing failed written, and a retry of a failed append
 * (same event ids) is written, not taken for a duplicate.
 */
import { describe, it, assert } from "@effect/vitest"
import { Duration, Effect, Either, Logger, Scope, TestClock } from "effect"
import { Disk, MemoryDisk, Prng } from "@vellum/platform"
import { make, type StorageConfig } from "../src/index.js"
import { baseConfig, ev, evs, readAll, streamIds } from "./streams-harness.js"

const openOn = (mem: MemoryDisk, config: StorageConfig) =>
  Effect.flatMap(Effect.scope, (scope) =>
    make(config).pipe(Effect.provideService(Disk, mem.service), Scope.extend(scope))
  )

describe("streams: a full disk heals", () => {
  for (const preallocateChunks of [false, true]) {
    it.scoped(
      `appends fail with DiskFull while the disk is full, and succeed again once space is freed (preallocate ${preallocateChunks})`,
      () =>
        Effect.gen(function* () {
          const mem = new MemoryDisk()
          const config = baseConfig({ chunkSize: 1024, preallocateChunks, verifyChunksOnOpen: true })
          const logged: Array<string> = []
          const collect = Logger.make(
            ({ message }) => void logged.push(Array.isArray(message) ? message.join(" ") : String(message))
          )
          const store = yield* openOn(mem, config).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, collect)))
          const acknowledged: Array<string> = []
          for (let i = 1; i <= 3; i++) {
            yield* store.append("s", -2, [ev(i)])
            acknowledged.push(ev(i).eventId)
          }
          // Full: whatever the next write needs (more data, a footer, a new chunk) fails.
          mem.capacityBytes = mem.totalBytes()
          let n = 10
          let first: Either.Either<unknown, { readonly _tag: string }> | undefined
          for (; n < 40; n++) {
            const attempt = yield* Effect.either(
              store.append("s", -2, [ev(n, { data: `{"pad":"${"x".repeat(200)}"}` })])
            )
            if (Either.isLeft(attempt)) {
              first = attempt
              break
            }
            acknowledged.push(ev(n).eventId)
          }
          assert.isTrue(first !== undefined && Either.isLeft(first), "an append failed on the full disk")
          const error = (first as Either.Left<{ _tag: string; reason?: string; message: string }, unknown>).left
          assert.strictEqual(error._tag, "StorageFailed")
          assert.strictEqual(error.reason, "DiskFull")
          assert.notInclude(error.message, "/db")
          assert.strictEqual(store.stats().writesRefused?.error.reason, "DiskFull")

          // Still full (no byte to spare): refused, whether the recovery or the next write meets the full disk.
          mem.capacityBytes = 0
          yield* TestClock.adjust(Duration.seconds(30))
          const stillFull = yield* Effect.either(store.append("s", -2, [ev(n)]))
          assert.isTrue(Either.isLeft(stillFull) && stillFull.left._tag === "StorageFailed", JSON.stringify(stillFull))
          assert.isDefined(store.stats().writesRefused)

          // Space is freed: within the retry backoff the writer recovers, and the same append (same id) goes in.
          mem.capacityBytes = undefined
          yield* TestClock.adjust(Duration.seconds(6))
          // Degraded until a write succeeds again.
          assert.isDefined(store.stats().writesRefused)
          const retried = yield* store.append("s", -2, [ev(n)])
          assert.isUndefined(store.stats().writesRefused)
          // Logged once each way, whatever the number of refused appends: the failure with the file, the recovery.
          const refusals = logged.filter((line) => line.startsWith("writes refused"))
          assert.strictEqual(refusals.length, 1, logged.join("\n"))
          assert.include(refusals[0], "/db/")
          assert.strictEqual(logged.filter((line) => line.startsWith("writes resumed")).length, 1, logged.join("\n"))
          assert.isFalse(retried.idempotent, "the failed append was never written, so its retry is not a duplicate")
          acknowledged.push(ev(n).eventId)
          // On across chunk rollovers (the restored chunk is completed with the checksum recovery kept).
          for (let i = 100; i < 130; i += 3) {
            yield* store.append("s", -2, evs(i, 3))
            acknowledged.push(...evs(i, 3).map((e) => e.eventId))
          }
          assert.deepStrictEqual(yield* streamIds(store, "s"), acknowledged)

          // A power cut: exactly the acknowledged events, once each.
          mem.crash(new Prng(5), "random")
          const again = yield* openOn(mem, config)
          assert.deepStrictEqual(yield* streamIds(again, "s"), acknowledged)
          const all = (yield* readAll(again)).filter((e) => e.stream === "s").map((e) => e.eventId)
          assert.deepStrictEqual(all, acknowledged)
        })
    )
  }

  it.scoped("a failed append that resent a written id leaves that id answering as its written copy", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const store = yield* openOn(mem, baseConfig({ chunkSize: 1024 }))
      const old = ev(1)
      yield* store.append("s", -2, [old])
      // New events followed by the old id, under Any: the first id is new, so the batch is written again.
      mem.capacityBytes = mem.totalBytes()
      let copy = 0
      let failed = false
      for (let n = 10; n < 40 && !failed; n++) {
        const attempt = yield* Effect.either(
          store.append("s", -2, [ev(n, { data: `{"pad":"${"x".repeat(200)}"}` }), old])
        )
        if (Either.isLeft(attempt)) failed = true
        else copy = attempt.right.lastEventNumber
      }
      assert.isTrue(failed, "an append failed on the full disk")
      mem.capacityBytes = undefined
      yield* TestClock.adjust(Duration.seconds(6))
      // The failed batch never wrote its copy of the old id: a retry of the old id alone is its written copy.
      const retried = yield* store.append("s", -2, [old])
      assert.isTrue(retried.idempotent, JSON.stringify(retried))
      assert.strictEqual(retried.firstEventNumber, copy)
    })
  )
})
