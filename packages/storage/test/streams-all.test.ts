/**
 * `$all`: log order across chunk boundaries, forward reads inclusive of
 * the position, backward reads strictly before it, paging until the end, everything stream reads hide is
 * still there, and positions that are not record boundaries are rejected.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import {
  DeletedStreamNumber,
  EventTypes,
  ExpectedVersion,
  framedLength,
  type EventRecord,
  type EventStoreService
} from "../src/index.js"
import { Hashes, Reopens, ev, evs, expectInvalid, json, openDb, readAll, readAllBackward } from "./streams-harness.js"

const { Any, NoStream } = ExpectedVersion

const key = (e: EventRecord) => `${e.stream}#${e.eventNumber}@${e.logPosition}`

/** Appends of assorted sizes to a few streams, enough to fill several 4 KiB chunks; returns what was appended, in order. */
const fill = (store: EventStoreService, appends = 40, firstId = 0) =>
  Effect.gen(function* () {
    const expected: Array<{ stream: string; eventId: string; position: number }> = []
    let id = firstId
    for (let i = 0; i < appends; i++) {
      const stream = `s-${i % 4}`
      const count = 1 + (i % 3)
      const events = Array.from({ length: count }, () => {
        const n = id++
        return ev(n, { data: JSON.stringify({ n, pad: "x".repeat((n * 37) % 300) }) })
      })
      const result = yield* store.append(stream, Any, events)
      assert.isFalse(result.idempotent)
      const read = yield* store.readStreamForward(stream, result.firstEventNumber, count)
      assert.strictEqual(read._tag, "Success")
      if (read._tag === "Success")
        for (const e of read.events)
          expected.push({ stream, eventId: e.event!.eventId, position: e.event!.logPosition })
      assert.strictEqual(expected[expected.length - 1]!.position, result.position)
    }
    return expected
  })

describe("streams: $all", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens) {
      describe(`${hash.name}, ${reopen}`, () => {
        it.scoped("order equals append order across chunk boundaries; starts with the epoch record", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            const expected = yield* fill(db.store)
            assert.isAbove(db.store.stats().chunks, 3, "the test should span several chunks")
            yield* db.reopen(reopen)
            const all = yield* readAll(db.store)
            assert.strictEqual(all[0]!.stream, "$epoch-information")
            assert.strictEqual(all[0]!.eventType, EventTypes.EpochInformation)
            assert.strictEqual(all[0]!.eventNumber, 0)
            assert.strictEqual(all[0]!.logPosition, 0)
            const user = all.filter((e) => e.stream.startsWith("s-"))
            assert.deepStrictEqual(
              user.map((e) => [e.stream, e.eventId, e.logPosition]),
              expected.map((e) => [e.stream, e.eventId, e.position])
            )
            for (let i = 1; i < all.length; i++) assert.isAbove(all[i]!.logPosition, all[i - 1]!.logPosition)
            if (reopen !== "none") {
              // The reopen began a new epoch, written after everything else.
              const last = all[all.length - 1]!
              assert.deepStrictEqual([last.stream, last.eventNumber], ["$epoch-information", 1])
            }
          })
        )

        it.scoped("paging forward and backward with nextPosition gives the same records for every page size", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* fill(db.store)
            const point = yield* db.store.writeScavengePoint(0, 0) // completes a chunk early
            const after = yield* fill(db.store, 10, 10_000)
            assert.strictEqual(after[0]!.position % db.config.chunkSize, 0, "the next write starts a new chunk")
            assert.isAbove(after[0]!.position, point.position)
            yield* db.reopen(reopen)
            const whole = (yield* readAll(db.store)).map(key)
            assert.isTrue(whole.some((k) => k.startsWith("$scavengePoints#0")))
            for (const pageSize of [1, 2, 3, 5, 7, 64]) {
              assert.deepStrictEqual(
                (yield* readAll(db.store, pageSize)).map(key),
                whole,
                `forward, pages of ${pageSize}`
              )
              assert.deepStrictEqual(
                (yield* readAllBackward(db.store, pageSize)).map(key),
                [...whole].reverse(),
                `backward, pages of ${pageSize}`
              )
            }
          })
        )

        it.scoped("forward is inclusive of the position, backward is strictly before it", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* fill(db.store, 30)
            yield* db.reopen(reopen)
            const all = yield* readAll(db.store)
            for (let i = 0; i < all.length; i++) {
              const position = all[i]!.logPosition
              const forward = yield* db.store.readAllForward(position, 2)
              assert.deepStrictEqual(
                forward.events.map((e) => key(e.event!)),
                all.slice(i, i + 2).map(key)
              )
              const backward = yield* db.store.readAllBackward(position, 2)
              assert.deepStrictEqual(
                backward.events.map((e) => key(e.event!)),
                all
                  .slice(Math.max(0, i - 2), i)
                  .reverse()
                  .map(key)
              )
              assert.strictEqual(backward.isEnd, i <= 2 && backward.events.length === i)
            }
            const end = yield* db.store.committedPosition
            assert.deepStrictEqual(yield* db.store.readAllForward(end, 10), {
              events: [],
              nextPosition: end,
              isEnd: true
            })
            const fromEnd = yield* db.store.readAllBackward(end, 1)
            assert.deepStrictEqual(
              fromEnd.events.map((e) => key(e.event!)),
              [key(all[all.length - 1]!)]
            )
            const fromHead = yield* db.store.readAllBackward(-1, 1)
            assert.deepStrictEqual(
              fromHead.events.map((e) => key(e.event!)),
              [key(all[all.length - 1]!)]
            )
          })
        )

        it.scoped(
          "the post-position of every record (where it ends) is a valid place to read from, also at the end of a chunk's data",
          () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              yield* fill(db.store, 30)
              yield* db.reopen(reopen)
              const all = yield* readAll(db.store)
              for (let i = 0; i < all.length; i++) {
                // Epoch records are shown as events but are shorter records on disk.
                if (all[i]!.stream === "$epoch-information") continue
                const post = all[i]!.logPosition + framedLength(all[i]!)
                const forward = yield* db.store.readAllForward(post, 1)
                assert.deepStrictEqual(
                  forward.events.map((e) => key(e.event!)),
                  all.slice(i + 1, i + 2).map(key),
                  `forward from the end of record ${i}`
                )
                const backward = yield* db.store.readAllBackward(post, 1)
                assert.deepStrictEqual(
                  backward.events.map((e) => key(e.event!)),
                  [key(all[i]!)],
                  `backward from the end of record ${i}`
                )
              }
            })
        )

        it.scoped(
          "$all includes what stream reads hide: truncated, soft- and hard-deleted streams, metadata, tombstones",
          () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              yield* db.store.append("trunc", NoStream, evs(0, 4))
              yield* db.store.setStreamMetadata("trunc", NoStream, json({ $maxCount: 1, $tb: 3 }))
              yield* db.store.append("soft", NoStream, evs(10, 2))
              yield* db.store.deleteStream("soft", Any, false)
              yield* db.store.append("hard", NoStream, evs(20, 2))
              yield* db.store.deleteStream("hard", Any, true)
              yield* db.reopen(reopen)
              const all = (yield* readAll(db.store))
                .filter((e) => !e.stream.startsWith("$epoch"))
                .map((e) => `${e.stream}#${e.eventNumber}:${e.eventType}`)
              assert.deepStrictEqual(all, [
                "trunc#0:T",
                "trunc#1:T",
                "trunc#2:T",
                "trunc#3:T",
                "$$trunc#0:$metadata",
                "soft#0:T",
                "soft#1:T",
                "$$soft#0:$metadata",
                "hard#0:T",
                "hard#1:T",
                `hard#${DeletedStreamNumber}:$streamDeleted`
              ])
            })
        )

        it.scoped("a position that is not a record boundary is InvalidRequest", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* fill(db.store, 20)
            yield* db.reopen(reopen)
            const all = yield* readAll(db.store)
            for (const e of all.slice(1, 6)) {
              for (const delta of [1, 4, 8, 13]) {
                yield* expectInvalid(db.store.readAllForward(e.logPosition + delta, 5), /not the position of an event/)
                yield* expectInvalid(db.store.readAllBackward(e.logPosition + delta, 5), /not the position of an event/)
              }
            }
            yield* expectInvalid(db.store.readAllForward(-1, 5), /not valid/)
            yield* expectInvalid(db.store.readAllForward(0.5, 5), /not valid/)
            yield* expectInvalid(db.store.readAllBackward(-2, 5), /not valid/)
          })
        )
      })
    }
  }

  it.scoped("a page ending exactly at the last record of a completed chunk continues into the next chunk", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      yield* fill(db.store, 30)
      const all = yield* readAll(db.store)
      const chunkSize = db.config.chunkSize
      // For every record that is the last of its chunk, read a page ending at it, then the next page.
      let checked = 0
      for (let i = 0; i + 1 < all.length; i++) {
        if (Math.floor(all[i]!.logPosition / chunkSize) === Math.floor(all[i + 1]!.logPosition / chunkSize)) continue
        const page = yield* db.store.readAllForward(all[i]!.logPosition, 1)
        assert.deepStrictEqual(
          page.events.map((e) => key(e.event!)),
          [key(all[i]!)]
        )
        assert.isFalse(page.isEnd)
        const next = yield* db.store.readAllForward(page.nextPosition, 1)
        assert.deepStrictEqual(
          next.events.map((e) => key(e.event!)),
          [key(all[i + 1]!)]
        )
        checked++
      }
      assert.isAbove(checked, 2)
    })
  )
})
