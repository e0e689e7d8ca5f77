/**
 * A new leader's epoch is in its log as soon as its round is written, while `lead` still waits for the
 * epoch's quorum; `epochs` must show it from then on (the uncommitted tail's epochs are included). The leader
 * places each subscribing follower by these epochs, and followers subscribe precisely while the epoch waits
 * for them: placed against the previous epochs, a follower with a divergent tail of the old term would be
 * told to keep it up to the leader's writer checkpoint, past the start of the new term.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { HeldGate, ID_A, leadHeld, openNode, settle } from "./replica-support.js"

describe("replica: the epoch of a term being led", () => {
  it.scoped("epochs shows the new epoch while it waits for its quorum, and the same one once committed", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      yield* leadHeld(a, 1)
      yield* a.replica.stopLeading
      const [first] = yield* a.replica.epochs(10)
      const before = a.replica.writerCheckpoint()

      const gate = new HeldGate()
      const leading = yield* Effect.fork(a.replica.lead(2, ID_A, gate.gate))
      yield* settle
      assert.strictEqual(gate.pending, 1, "the epoch waits for its quorum")
      assert.isAbove(a.replica.writerCheckpoint(), before, "the epoch is written")
      const waiting = yield* a.replica.epochs(10)
      assert.deepStrictEqual(
        waiting.map((e) => [e.epochNumber, e.position]),
        [
          [2, before],
          [1, first!.position]
        ]
      )
      assert.deepStrictEqual(yield* a.replica.epochs(1), [waiting[0]!])

      yield* gate.release(a.replica.writerCheckpoint())
      const led = yield* Fiber.join(leading)
      assert.deepStrictEqual(yield* a.replica.epochs(10), waiting)
      assert.deepStrictEqual(waiting[0], led)
    })
  )

  it.scoped("a term's first epoch shows while it waits, in an otherwise empty log", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const gate = new HeldGate()
      const leading = yield* Effect.fork(a.replica.lead(5, ID_A, gate.gate))
      yield* settle
      assert.strictEqual(gate.pending, 1)
      const waiting = yield* a.replica.epochs(10)
      assert.deepStrictEqual(
        waiting.map((e) => [e.epochNumber, e.position]),
        [[5, 0]]
      )
      yield* gate.fail
      const error = yield* Effect.flip(Fiber.join(leading))
      assert.strictEqual(error._tag, "CommitTimeout")
      // Its quorum lost, the epoch stays the log's newest (it is in the tail).
      assert.deepStrictEqual(yield* a.replica.epochs(10), waiting)
    })
  )
})
