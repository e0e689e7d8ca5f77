/**
 * Cutting a follower's uncommitted tail: a node whose log diverged (writes of a term that never reached a
 * quorum) cuts back to where it agrees with the new leader and follows it, byte for byte; its event-id
 * cache forgets the cut writes, so their retry is written again rather than answered as the lost copy.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import { ev, evs, readAll, streamIds, streamNumbers } from "./streams-harness.js"
import { ID_A, ID_B, follow, leadHeld, openGate, openNode, pull, rawLog, settle } from "./replica-support.js"

describe("replica: truncating the uncommitted tail", () => {
  it.scoped("a diverged node cuts its tail, follows the new leader, and writes a cut append's retry again", () =>
    Effect.gen(function* () {
      const a = yield* openNode({ eventIdCacheCapacity: 64 })
      const b = yield* openNode({ eventIdCacheCapacity: 64 })
      const gate = yield* leadHeld(a, 1)
      const first = yield* Effect.fork(a.store.append("s", -2, [ev(1)]))
      yield* settle
      yield* gate.release(a.replica.writerCheckpoint())
      yield* Fiber.join(first)
      yield* follow(a.replica, b.replica)
      // A's write of term 1 never reaches a quorum (nor B).
      const lost = yield* Effect.fork(Effect.either(a.store.append("s", -2, evs(2, 3))))
      yield* settle
      yield* a.replica.stopLeading
      assert.isTrue(Either.isLeft(yield* Fiber.join(lost)))
      const agreed = a.replica.committed()
      assert.isAbove(a.replica.writerCheckpoint(), agreed)
      // B leads term 2 and writes past the point where A diverged.
      yield* b.replica.lead(2, ID_B, openGate)
      yield* b.store.append("s", 0, [ev(10)])
      yield* b.store.append("other", -2, evs(20, 30))
      // The cut: refused below the committed position, inside a record, past the log, and while leading.
      for (const bad of [agreed - 1, agreed + 3, a.replica.writerCheckpoint() + 1])
        assert.strictEqual((yield* Effect.flip(a.replica.truncate(bad)))._tag, "InvalidRequest", `cut at ${bad}`)
      assert.strictEqual((yield* Effect.flip(b.replica.truncate(b.replica.committed())))._tag, "InvalidRequest")
      yield* a.replica.truncate(agreed)
      assert.strictEqual(a.replica.writerCheckpoint(), agreed)
      assert.deepStrictEqual(yield* a.replica.epochs(5), (yield* b.replica.epochs(5)).slice(1))
      yield* follow(b.replica, a.replica)
      assert.deepStrictEqual(yield* rawLog(a.replica), yield* rawLog(b.replica))
      assert.deepStrictEqual(yield* readAll(a.store), yield* readAll(b.store))
      assert.deepStrictEqual(yield* a.replica.epochs(5), yield* b.replica.epochs(5))
      // A leads term 3; a client retries the append that was cut: it is written, not answered as idempotent.
      yield* b.replica.stopLeading
      yield* a.replica.lead(3, ID_A, openGate)
      const retry = yield* a.store.append("s", -2, evs(2, 3))
      assert.isFalse(retry.idempotent)
      assert.deepStrictEqual(yield* streamNumbers(a.store, "s"), [0, 1, 2, 3, 4])
      assert.deepStrictEqual(
        yield* streamIds(a.store, "s"),
        [ev(1), ev(10), ...evs(2, 3)].map((e) => e.eventId)
      )
      // Ids that survived the cut still answer as their events.
      assert.isTrue((yield* a.store.append("s", -2, [ev(10)])).idempotent)
    })
  )

  it.scoped("a cut back across chunks removes the later chunks, and the log is received again after it", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      yield* a.store.append("early", -2, evs(1, 2))
      yield* follow(a.replica, b.replica)
      const agreed = b.replica.committed()
      for (let i = 0; i < 30; i++) yield* a.store.append(`s${i % 4}`, -2, evs(100 + i * 4, 4))
      yield* pull(a.replica, b.replica)
      const chunkSize = b.replica.chunkSize
      assert.isAbove(b.replica.writerCheckpoint(), agreed + 2 * chunkSize, "the tail spans chunks")
      const chunksBefore = b.store.stats().chunks
      yield* b.replica.truncate(agreed)
      assert.strictEqual(b.replica.writerCheckpoint(), agreed)
      assert.strictEqual(b.store.stats().chunks, Math.floor(agreed / chunkSize) + 1)
      assert.isBelow(b.store.stats().chunks, chunksBefore)
      // Survives a restart as cut.
      yield* b.restart
      assert.strictEqual(b.replica.writerCheckpoint(), agreed)
      yield* follow(a.replica, b.replica)
      assert.deepStrictEqual(yield* rawLog(b.replica), yield* rawLog(a.replica))
      assert.deepStrictEqual(yield* readAll(b.store), yield* readAll(a.store))
    })
  )

  it.scoped("a cut exactly at a chunk's start keeps the completed chunk before it", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      const chunkSize = a.replica.chunkSize
      for (let i = 0; a.replica.writerCheckpoint() < 2 * chunkSize + 100; i++) yield* a.store.append("s", -2, [ev(i)])
      // B commits up to the end of the first chunk, holding the rest as its tail.
      yield* pull(a.replica, b.replica)
      yield* b.replica.commitTo(chunkSize)
      assert.strictEqual(b.replica.committed(), chunkSize)
      yield* b.replica.truncate(chunkSize)
      assert.strictEqual(b.replica.writerCheckpoint(), chunkSize)
      yield* follow(a.replica, b.replica)
      assert.deepStrictEqual(yield* rawLog(b.replica), yield* rawLog(a.replica))
    })
  )
})
