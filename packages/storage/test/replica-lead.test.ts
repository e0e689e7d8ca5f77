/**
 * A clustered store as leader: it writes nothing for clients until `lead`, numbers its epoch with the
 * term, holds each write round until the quorum gate passes it (nothing of the round is readable before),
 * answers CommitTimeout when the gate fails, when it stops leading, or when the commit timeout passes, and
 * refuses with NotLeader afterwards. A new leader commits the tail it holds from earlier terms first.
 */
import { describe, it, assert } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, TestClock } from "effect"
import { ev, evs, streamNumbers } from "./streams-harness.js"
import { HeldGate, ID_A, ID_B, follow, leadHeld, openGate, openNode, pull, settle } from "./replica-support.js"

describe("replica: leading", () => {
  it.scoped("client writes are refused NotLeader before lead and after stopLeading; no epoch at open", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      assert.deepStrictEqual(yield* a.replica.epochs(10), [])
      assert.strictEqual(a.replica.writerCheckpoint(), 0)
      for (const write of [
        a.store.append("s", -2, [ev(1)]),
        a.store.deleteStream("s", -2, false),
        a.store.setStreamMetadata("s", -2, Buffer.from("{}")),
        a.store.writeScavengePoint(0, 0)
      ]) {
        const error = yield* Effect.flip(write)
        assert.strictEqual(error._tag, "NotLeader")
        assert.match(error.message, /not the leader/)
      }
      yield* a.replica.lead(1, ID_A, openGate)
      assert.strictEqual((yield* a.store.append("s", -2, [ev(1)])).firstEventNumber, 0)
      yield* a.replica.stopLeading
      assert.strictEqual((yield* Effect.flip(a.store.append("s", -2, [ev(2)])))._tag, "NotLeader")
    })
  )

  it.scoped("epochs carry the term, chain back, and $epoch-information reads well with gaps", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const first = yield* a.replica.lead(3, ID_A, openGate)
      assert.strictEqual(first.epochNumber, 3)
      yield* a.replica.stopLeading
      for (const stale of [3, 2, -1]) {
        const error = yield* Effect.flip(a.replica.lead(stale, ID_A, openGate))
        assert.strictEqual(error._tag, "InvalidRequest", `term ${stale}`)
      }
      const second = yield* a.replica.lead(7, ID_A, openGate)
      assert.strictEqual((yield* Effect.flip(a.replica.lead(8, ID_A, openGate)))._tag, "InvalidRequest", "leads")
      assert.deepStrictEqual(yield* a.replica.epochs(10), [second, first])
      assert.deepStrictEqual(yield* a.replica.epochs(1), [second])
      assert.deepStrictEqual(yield* streamNumbers(a.store, "$epoch-information"), [3, 7])
      const back = yield* a.store.readStreamBackward("$epoch-information", -1, 10)
      assert.strictEqual(back._tag, "Success")
      if (back._tag === "Success") {
        assert.deepStrictEqual(
          back.events.map((e) => e.event!.eventNumber),
          [7, 3]
        )
        assert.strictEqual(back.lastEventNumber, 7)
        const body = JSON.parse(back.events[0]!.event!.data.toString()) as { prevEpochPosition: number }
        assert.strictEqual(body.prevEpochPosition, first.position)
      }
      const one = yield* a.store.readEvent("$epoch-information", 5)
      assert.strictEqual(one._tag, "NotFound")
      // A restart finds the last epoch again (no new one is written).
      yield* a.restart
      assert.deepStrictEqual(yield* a.replica.epochs(10), [second, first])
    })
  )

  it.scoped("a round is neither readable nor answered until its quorum gate passes it", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const gate = new HeldGate()
      const leading = yield* Effect.fork(a.replica.lead(1, ID_A, gate.gate))
      yield* settle
      assert.strictEqual(gate.pending, 1, "the epoch waits")
      yield* gate.release(a.replica.writerCheckpoint())
      yield* Fiber.join(leading)
      const committedBefore = a.replica.committed()
      const append = yield* Effect.fork(a.store.append("s", -2, evs(1, 2)))
      yield* settle
      assert.strictEqual(gate.pending, 1)
      assert.isAbove(a.replica.writerCheckpoint(), committedBefore, "durable")
      assert.strictEqual(a.replica.committed(), committedBefore, "not committed")
      assert.strictEqual((yield* a.store.readStreamForward("s", 0, 10))._tag, "NoStream")
      assert.isTrue((yield* Fiber.poll(append))._tag === "None", "not answered")
      // Another write is planned against the waiting round's decisions and written behind it, but answered
      // only once its own gate passes, after the first.
      const firstEnd = a.replica.writerCheckpoint()
      const second = yield* Effect.fork(a.store.append("s", 1, [ev(3)]))
      yield* settle
      assert.strictEqual(gate.pending, 2, "the rounds pipeline")
      assert.isAbove(a.replica.writerCheckpoint(), firstEnd, "the second round is durable")
      yield* gate.release(firstEnd)
      assert.strictEqual((yield* Fiber.join(append)).lastEventNumber, 1)
      yield* settle
      assert.isTrue((yield* Fiber.poll(second))._tag === "None", "not answered before its own gate")
      assert.deepStrictEqual(yield* streamNumbers(a.store, "s"), [0, 1], "only the committed round is readable")
      yield* gate.release(a.replica.writerCheckpoint())
      assert.strictEqual((yield* Fiber.join(second)).firstEventNumber, 2)
      assert.deepStrictEqual(yield* streamNumbers(a.store, "s"), [0, 1, 2])
    })
  )

  it.scoped("a failed gate leaves the answers its round decided without writing (a wrong expected version)", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const gate = yield* leadHeld(a, 1)
      const first = yield* Effect.fork(a.store.append("s", -2, [ev(1)]))
      yield* settle
      const firstEnd = a.replica.writerCheckpoint()
      // Both are planned together in the next round, written while the first waits.
      const written = yield* Effect.fork(Effect.either(a.store.append("t", -2, [ev(2)])))
      const refused = yield* Effect.fork(Effect.either(a.store.append("s", 5, [ev(3)])))
      yield* settle
      yield* gate.release(firstEnd)
      yield* Fiber.join(first)
      yield* settle
      assert.strictEqual(gate.pending, 1)
      yield* gate.fail
      const w = yield* Fiber.join(written)
      const r = yield* Fiber.join(refused)
      assert.isTrue(Either.isLeft(w) && w.left._tag === "CommitTimeout", JSON.stringify(w))
      assert.isTrue(Either.isLeft(r) && r.left._tag === "WrongExpectedVersion", JSON.stringify(r))
    })
  )

  it.scoped("stopLeading ends the waiting rounds as CommitTimeout and refuses the queued ones", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const gate = yield* leadHeld(a, 1)
      // Each append is a round of its own; four rounds wait at most, the fifth append stays queued.
      const waiting = []
      for (let i = 0; i < 4; i++) {
        waiting.push(yield* Effect.fork(Effect.either(a.store.append(`s${i}`, -2, [ev(i + 1)]))))
        yield* settle
      }
      assert.strictEqual(gate.pending, 4, "four rounds in flight")
      const queued = yield* Effect.fork(Effect.either(a.store.append("t", -2, [ev(9)])))
      yield* settle
      assert.strictEqual(gate.pending, 4, "no fifth round while four wait")
      yield* a.replica.stopLeading
      for (const fiber of waiting) {
        const answer = yield* Fiber.join(fiber)
        assert.isTrue(Either.isLeft(answer) && answer.left._tag === "CommitTimeout", JSON.stringify(answer))
      }
      const second = yield* Fiber.join(queued)
      assert.isTrue(Either.isLeft(second) && second.left._tag === "NotLeader", JSON.stringify(second))
      for (let i = 0; i < 4; i++)
        assert.strictEqual((yield* a.store.readStreamForward(`s${i}`, 0, 10))._tag, "NoStream")
    })
  )

  it.scoped("a write waiting for its quorum past the commit timeout is answered CommitTimeout; it commits later", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const gate = yield* leadHeld(a, 1)
      const append = yield* Effect.fork(Effect.either(a.store.append("s", -2, [ev(1)])))
      yield* settle
      yield* TestClock.adjust(Duration.millis(1_500))
      assert.isTrue((yield* Fiber.poll(append))._tag === "None", "not before the timeout")
      yield* TestClock.adjust(Duration.seconds(2))
      const answer = yield* Fiber.join(append)
      assert.isTrue(Either.isLeft(answer) && answer.left._tag === "CommitTimeout", JSON.stringify(answer))
      // The round kept waiting: once the quorum has it, it is committed and the node goes on leading.
      yield* gate.release(a.replica.writerCheckpoint())
      yield* settle
      assert.deepStrictEqual(yield* streamNumbers(a.store, "s"), [0])
      const next = yield* Effect.fork(a.store.append("s", 0, [ev(2)]))
      yield* settle
      yield* gate.release(a.replica.writerCheckpoint())
      assert.strictEqual((yield* Fiber.join(next)).firstEventNumber, 1)
    })
  )

  it.scoped("lead waits for its epoch's quorum past the commit timeout, and fails when the gate does", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const gate = new HeldGate()
      const leading = yield* Effect.fork(a.replica.lead(1, ID_A, gate.gate))
      yield* settle
      yield* TestClock.adjust(Duration.seconds(30))
      assert.isTrue((yield* Fiber.poll(leading))._tag === "None", "still waiting")
      yield* gate.fail
      assert.strictEqual((yield* Effect.flip(Fiber.join(leading)))._tag, "CommitTimeout")
      assert.strictEqual((yield* Effect.flip(a.store.append("s", -2, [ev(1)])))._tag, "NotLeader")
      // Its epoch is in the tail: the next term chains to it, and it is committed with the new one.
      const first = (yield* a.replica.epochs(1))[0]!
      assert.strictEqual(first.epochNumber, 1)
      const second = yield* a.replica.lead(2, ID_A, openGate)
      assert.deepStrictEqual(yield* a.replica.epochs(5), [second, first])
      assert.deepStrictEqual(yield* streamNumbers(a.store, "$epoch-information"), [1, 2])
    })
  )

  it.scoped("a new leader commits the tail it holds from an earlier term before it takes writes", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* leadHeld(a, 1)
      yield* follow(a.replica, b.replica)
      // A write B receives but never learns is committed.
      const lost = yield* Effect.fork(Effect.either(a.store.append("s", -2, evs(1, 2))))
      yield* settle
      yield* pull(a.replica, b.replica)
      assert.strictEqual((yield* b.store.readStreamForward("s", 0, 10))._tag, "NoStream")
      yield* a.replica.stopLeading
      assert.isTrue(Either.isLeft(yield* Fiber.join(lost)))
      // B leads term 2: its whole log, the tail included, is part of its term.
      yield* b.replica.lead(2, ID_B, openGate)
      assert.deepStrictEqual(yield* streamNumbers(b.store, "s"), [0, 1])
      assert.strictEqual(b.replica.committed(), b.replica.writerCheckpoint())
      // A retry of the tail's append is idempotent: the tail's ids were cached as it was committed.
      const retry = yield* b.store.append("s", -2, evs(1, 2))
      assert.isTrue(retry.idempotent)
      assert.strictEqual((yield* b.store.append("s", 1, [ev(3)])).firstEventNumber, 2)
    })
  )
})
