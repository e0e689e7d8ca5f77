/**
 * Group commit: many concurrent appends to the same and to different streams, some with conflicting
 * expected versions. Every outcome must be explainable by some serial order — numbers contiguous per
 * stream, each success's numbers holding its own events, exactly one winner among racing NoStream
 * appends — and the commit notifications (the PubSub and the plain listeners) must advance with the log.
 */
import { describe, it, assert } from "@effect/vitest"
import { Chunk, Effect, Either, Exit, PubSub, Queue, Scope } from "effect"
import { ExpectedVersion, type CommitNotice } from "../src/index.js"
import { Hashes, Reopens, ev, evs, openDb, readAll, streamIds, uuid } from "./streams-harness.js"

const { Any, NoStream, StreamExists } = ExpectedVersion

interface Attempt {
  readonly stream: string
  readonly expected: number
  readonly ids: ReadonlyArray<number>
}

describe("streams: group commit", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens) {
      it.scoped(`${hash.name}, ${reopen}: concurrent appends are serializable`, () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* db.store.append("pre", NoStream, evs(9000, 3))
          const attempts: Array<Attempt> = []
          let id = 0
          for (let i = 0; i < 120; i++) {
            const stream = `c-${i % 5}`
            const mode = i % 6
            const expected =
              mode === 0 ? NoStream : mode === 1 ? Any : mode === 2 ? StreamExists : mode === 3 ? (i % 7) - 1 : Any
            const count = 1 + (i % 3)
            attempts.push({ stream, expected, ids: Array.from({ length: count }, () => id++) })
          }
          // Racing NoStream appends to one new stream: exactly one wins.
          for (let i = 0; i < 8; i++) attempts.push({ stream: "race", expected: NoStream, ids: [id++] })
          // Racing "append at 2" on a stream at 2: exactly one wins.
          for (let i = 0; i < 6; i++) attempts.push({ stream: "pre", expected: 2, ids: [id++] })
          // The same batch twice with Any: the second is idempotent (same round or not).
          const dup = [id++, id++]
          attempts.push({ stream: "dup", expected: Any, ids: dup }, { stream: "dup", expected: Any, ids: dup })

          const outcomes = yield* Effect.forEach(
            attempts,
            (a) =>
              Effect.either(
                db.store.append(
                  a.stream,
                  a.expected,
                  a.ids.map((n) => ev(n))
                )
              ),
            { concurrency: "unbounded" }
          )

          for (const [i, outcome] of outcomes.entries()) {
            if (Either.isLeft(outcome)) {
              assert.oneOf(outcome.left._tag, ["WrongExpectedVersion"], `attempt ${i}: ${JSON.stringify(outcome.left)}`)
            }
          }
          const winners = (stream: string) =>
            outcomes.filter((o, i) => attempts[i]!.stream === stream && Either.isRight(o)).length
          assert.strictEqual(winners("race"), 1)
          assert.strictEqual(winners("pre"), 1)
          const dupResults = outcomes.slice(-2).map((o) => Either.getOrThrow(o))
          assert.deepStrictEqual(dupResults.map((r) => r.idempotent).sort(), [false, true])
          assert.deepStrictEqual(dupResults[0]!.position, dupResults[1]!.position)

          yield* db.reopen(reopen)

          // Every stream holds exactly the events of its successful, non-idempotent appends, each at
          // the numbers it was told, contiguous from 0.
          const streams = [...new Set(attempts.map((a) => a.stream))]
          for (const stream of streams) {
            const ids = yield* streamIds(db.store, stream)
            const expected: Array<string> = stream === "pre" ? [uuid(9000), uuid(9001), uuid(9002)] : []
            const successes = attempts
              .map((a, i) => ({ a, o: outcomes[i]! }))
              .filter(({ a, o }) => a.stream === stream && Either.isRight(o) && !o.right.idempotent)
              .map(({ a, o }) => ({ a, r: Either.getOrThrow(o) }))
              .sort((x, y) => x.r.firstEventNumber - y.r.firstEventNumber)
            for (const { a, r } of successes) {
              assert.strictEqual(r.firstEventNumber, expected.length, `${stream}: contiguous numbering`)
              assert.strictEqual(r.lastEventNumber, r.firstEventNumber + a.ids.length - 1)
              expected.push(...a.ids.map(uuid))
            }
            assert.deepStrictEqual(ids, expected, stream)
          }
          // A WEV must have been wrong against some state: it names a version the stream really had.
          for (const [i, outcome] of outcomes.entries()) {
            if (Either.isRight(outcome)) continue
            const a = attempts[i]!
            const current = (outcome.left as { currentVersion: number }).currentVersion
            assert.isAtLeast(current, -1)
            assert.notStrictEqual(current, a.expected, `attempt ${i} failed although it expected the current version`)
          }
          // Positions of successful appends are in log order of their numbers within a stream.
          const all = yield* readAll(db.store)
          for (const outcome of outcomes) {
            if (Either.isRight(outcome)) assert.isTrue(all.some((e) => e.logPosition === outcome.right.position))
          }
        })
      )
    }
  }

  it.scoped("commit notices and the committed position advance with every batch", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      const notices = yield* PubSub.subscribe(db.store.commits)
      // The plain listeners hear the same notices, in the same order, and no more once their scope closes.
      const heard: Array<CommitNotice> = []
      const listening = yield* Scope.make()
      yield* Scope.extend(
        db.store.onCommit((notice) => heard.push(notice)),
        listening
      )
      const start = yield* db.store.committedPosition

      const results = yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) => db.store.append(`n-${i % 4}`, Any, [ev(i)]),
        { concurrency: "unbounded" }
      )
      const end = yield* db.store.committedPosition
      for (const r of results) assert.isBelow(r.position, end)

      const received: Array<CommitNotice> = [...Chunk.toReadonlyArray(yield* Queue.takeAll(notices))]
      assert.isAbove(received.length, 0)
      assert.isBelow(received.length, 40, "concurrent appends share batches")
      let previous = start
      for (const n of received) {
        assert.strictEqual(n.firstPosition, previous, "batches follow each other")
        assert.isAbove(n.endPosition, n.firstPosition)
        previous = n.endPosition
      }
      assert.strictEqual(previous, end)
      const streams = new Set(received.flatMap((n) => n.streams))
      assert.deepStrictEqual([...streams].sort(), ["n-0", "n-1", "n-2", "n-3"])
      for (const r of results) {
        assert.isTrue(received.some((n) => n.firstPosition <= r.position && r.position < n.endPosition))
      }

      // A failed append commits nothing and publishes nothing.
      yield* Effect.flip(db.store.append("n-0", NoStream, [ev(100)]))
      assert.strictEqual(yield* db.store.committedPosition, end)
      assert.strictEqual((yield* Queue.takeAll(notices)).length, 0)
      // Deletes and metadata are batches too.
      yield* db.store.setStreamMetadata("n-1", Any, Buffer.from("{}"))
      yield* db.store.deleteStream("n-2", Any, true)
      const more = Chunk.toReadonlyArray(yield* Queue.takeAll(notices))
      assert.deepStrictEqual(
        more.map((n) => n.streams),
        [["$$n-1"], ["n-2"]]
      )
      assert.strictEqual(more[1]!.endPosition, yield* db.store.committedPosition)
      assert.deepStrictEqual(heard, [...received, ...more])
      yield* Scope.close(listening, Exit.void)
      yield* db.store.append("n-3", Any, [ev(101)])
      assert.strictEqual(heard.length, received.length + more.length, "a listener whose scope closed hears nothing")
      assert.strictEqual((yield* Queue.takeAll(notices)).length, 1)
    })
  )

  it.scoped("a reader that sees the committed position sees every event below it", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      const seen = yield* Effect.fork(
        Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => db.store.append("r", Any, evs(i * 2, 2)),
          { concurrency: "unbounded" }
        )
      )
      for (let k = 0; k < 20; k++) {
        const committed = yield* db.store.committedPosition
        const all = yield* readAll(db.store)
        const last = all[all.length - 1]!
        assert.isBelow(last.logPosition, committed)
        const read = yield* db.store.readStreamForward("r", 0, 4096)
        const count = read._tag === "Success" ? read.events.length : 0
        assert.strictEqual(count % 2, 0, "appends are atomic")
        yield* Effect.yieldNow()
      }
      yield* seen.await
    })
  )
})
