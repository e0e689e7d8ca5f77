/**
 * A leader's write rounds pipeline: a round is planned and written while earlier rounds wait for their quorum,
 * against committed state plus the waiting rounds' decisions, and is answered only after them, once its own
 * gate passes. When a gate fails, every round behind it is answered CommitTimeout and none becomes readable.
 */
import { describe, it, assert } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, TestClock } from "effect"
import { ev, json, streamNumbers } from "./streams-harness.js"
import { leadHeld, openNode, settle } from "./replica-support.js"

describe("replica: pipelined rounds", () => {
  it.scoped("a round written behind a waiting one is planned against its decisions", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const gate = yield* leadHeld(a, 1)
      // The first round: a new stream, a deleted one, a stream's metadata.
      const created = yield* Effect.fork(a.store.append("s", -2, [ev(1)]))
      const deleted = yield* Effect.fork(a.store.deleteStream("d", -2, true))
      const meta = yield* Effect.fork(a.store.setStreamMetadata("m", -2, json({ $maxCount: 5 })))
      yield* settle
      const firstEnd = a.replica.writerCheckpoint()
      assert.strictEqual(gate.pending, 1)
      // The second round, written while the first waits.
      const noStream = yield* Effect.fork(Effect.either(a.store.append("s", -1, [ev(2)])))
      const next = yield* Effect.fork(Effect.either(a.store.append("s", 0, [ev(3)])))
      const retry = yield* Effect.fork(Effect.either(a.store.append("s", -2, [ev(1)])))
      const toDeleted = yield* Effect.fork(Effect.either(a.store.append("d", -2, [ev(4)])))
      const metaAgain = yield* Effect.fork(Effect.either(a.store.setStreamMetadata("m", 0, json({ $maxCount: 6 }))))
      yield* settle
      assert.strictEqual(gate.pending, 2, "the second round waits behind the first")
      for (const fiber of [noStream, next, retry, toDeleted, metaAgain])
        assert.isTrue((yield* Fiber.poll(fiber))._tag === "None", "nothing is answered before the first round")
      yield* gate.release(firstEnd)
      yield* Fiber.join(created)
      yield* Fiber.join(deleted)
      yield* Fiber.join(meta)
      yield* settle
      assert.isTrue((yield* Fiber.poll(retry))._tag === "None", "answered in order, once its round's gate passes")
      yield* gate.release(a.replica.writerCheckpoint())
      const ns = yield* Fiber.join(noStream)
      assert.isTrue(Either.isLeft(ns) && ns.left._tag === "WrongExpectedVersion", JSON.stringify(ns))
      const n = yield* Fiber.join(next)
      assert.isTrue(Either.isRight(n) && n.right.firstEventNumber === 1, JSON.stringify(n))
      const r = yield* Fiber.join(retry)
      assert.isTrue(Either.isRight(r) && r.right.firstEventNumber === 0, JSON.stringify(r))
      const d = yield* Fiber.join(toDeleted)
      assert.isTrue(Either.isLeft(d) && d.left._tag === "StreamDeleted", JSON.stringify(d))
      const m = yield* Fiber.join(metaAgain)
      assert.isTrue(Either.isRight(m), JSON.stringify(m))
      assert.deepStrictEqual(yield* streamNumbers(a.store, "s"), [0, 1])
      // A metastream keeps its last event only: the second is number 1.
      assert.deepStrictEqual(yield* streamNumbers(a.store, "$$m"), [1])
    })
  )

  it.scoped(
    "a failed gate answers its round and every round behind it CommitTimeout; none becomes readable; NotLeader after",
    () =>
      Effect.gen(function* () {
        const a = yield* openNode()
        const gate = yield* leadHeld(a, 1)
        const first = yield* Effect.fork(Effect.either(a.store.append("s", -2, [ev(1)])))
        yield* settle
        // Planned against the first round's event: decided on a write whose outcome becomes unknown.
        const second = yield* Effect.fork(Effect.either(a.store.append("s", 0, [ev(2)])))
        const refused = yield* Effect.fork(Effect.either(a.store.append("s", -1, [ev(3)])))
        yield* settle
        assert.strictEqual(gate.pending, 2)
        yield* gate.fail
        for (const fiber of [first, second, refused]) {
          const answer = yield* Fiber.join(fiber)
          assert.isTrue(Either.isLeft(answer) && answer.left._tag === "CommitTimeout", JSON.stringify(answer))
        }
        assert.strictEqual((yield* a.store.readStreamForward("s", 0, 10))._tag, "NoStream", "still uncommitted")
        assert.strictEqual((yield* Effect.flip(a.store.append("t", -2, [ev(4)])))._tag, "NotLeader")
      })
  )

  it.scoped(
    "a write failing behind a waiting round fails alone: the waiting round commits, the failed ids are forgotten",
    () =>
      Effect.gen(function* () {
        const a = yield* openNode()
        const gate = yield* leadHeld(a, 1)
        const first = yield* Effect.fork(a.store.append("s", -2, [ev(1)]))
        yield* settle
        const firstEnd = a.replica.writerCheckpoint()
        a.mem.capacityBytes = a.mem.totalBytes()
        const failing = yield* Effect.either(a.store.append("s", 0, [ev(2, { data: `{"pad":"${"x".repeat(500)}"}` })]))
        assert.isTrue(Either.isLeft(failing) && failing.left._tag === "StorageFailed", JSON.stringify(failing))
        assert.strictEqual(a.replica.writerCheckpoint(), firstEnd, "nothing of the failed round is in the log")
        yield* gate.release(firstEnd)
        assert.strictEqual((yield* Fiber.join(first)).firstEventNumber, 0)
        a.mem.capacityBytes = undefined
        yield* TestClock.adjust(Duration.seconds(6))
        const retried = yield* Effect.fork(a.store.append("s", 0, [ev(2)]))
        yield* settle
        yield* gate.release(a.replica.writerCheckpoint())
        const again = yield* Fiber.join(retried)
        assert.isFalse(again.idempotent, "the failed append was never written: its retry is written")
        assert.deepStrictEqual(yield* streamNumbers(a.store, "s"), [0, 1])
      })
  )
})
