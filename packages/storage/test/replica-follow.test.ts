/**
 * A clustered store as leader and as follower: two stores on two disks, the follower pulling the leader's
 * log in raw slices (readRaw → appendRaw) and committing as far as the leader has (commitTo). The logs are
 * the same bytes up to the committed position, a follower never shows what is not committed, and a restart
 * indexes only up to the persisted replication checkpoint.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import type { CommitNotice } from "../src/index.js"
import { ev, evs, readAll, streamIds, streamNumbers } from "./streams-harness.js"
import { ID_A, follow, openGate, openNode, pull, rawLog, sliceAt } from "./replica-support.js"

describe("replica: following a leader", () => {
  it.scoped("a follower's log is the leader's, byte for byte, across chunks and a scavenge point", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      for (let i = 0; i < 40; i++) yield* a.store.append(`s-${i % 3}`, -2, evs(i * 3, 3))
      yield* a.store.writeScavengePoint(0, 0)
      yield* a.store.append("after", -2, [ev(1000)])
      yield* a.store.deleteStream("s-2", -2, true)
      assert.isAbove(a.replica.writerCheckpoint(), 3 * a.replica.chunkSize, "several chunks")
      yield* follow(a.replica, b.replica)
      assert.strictEqual(b.replica.writerCheckpoint(), a.replica.writerCheckpoint())
      assert.strictEqual(b.replica.committed(), a.replica.committed())
      assert.deepStrictEqual(yield* rawLog(b.replica), yield* rawLog(a.replica))
      assert.deepStrictEqual(yield* readAll(b.store), yield* readAll(a.store))
      assert.deepStrictEqual(yield* streamIds(b.store, "s-1"), yield* streamIds(a.store, "s-1"))
      assert.deepStrictEqual(yield* b.replica.epochs(5), yield* a.replica.epochs(5))
      // The follower takes no client writes.
      const refused = yield* Effect.flip(b.store.append("s-0", -2, [ev(5000)]))
      assert.strictEqual(refused._tag, "NotLeader")
    })
  )

  it.scoped("a follower reads nothing past its committed position, however much it holds", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      const first = yield* a.store.append("s", -2, evs(1, 2))
      yield* a.store.append("s", -2, evs(3, 2))
      yield* pull(a.replica, b.replica)
      assert.strictEqual(b.replica.writerCheckpoint(), a.replica.writerCheckpoint())
      assert.strictEqual((yield* b.store.readStreamForward("s", 0, 10))._tag, "NoStream", "nothing committed yet")
      assert.deepStrictEqual(yield* readAll(b.store), [])
      // Committed up to the end of the first append: its events and nothing after.
      const firstEnd = (yield* sliceAt(a.replica, first.position, 1))!.end
      const notices: Array<CommitNotice> = []
      yield* b.store.onCommit((notice) => notices.push(notice))
      yield* b.replica.commitTo(firstEnd)
      assert.strictEqual(b.replica.committed(), firstEnd)
      // Commits are announced as on a leader (long polls, the users cache).
      assert.strictEqual(notices[notices.length - 1]!.endPosition, firstEnd)
      assert.include(
        notices.flatMap((n) => n.streams),
        "s"
      )
      assert.deepStrictEqual(yield* streamNumbers(b.store, "s"), [0, 1])
      assert.isTrue((yield* readAll(b.store)).every((e) => e.logPosition < firstEnd))
      // A commit position past what the follower holds is capped at its writer checkpoint.
      yield* b.replica.commitTo(a.replica.writerCheckpoint() + 10_000)
      assert.strictEqual(b.replica.committed(), b.replica.writerCheckpoint())
      assert.deepStrictEqual(yield* streamNumbers(b.store, "s"), [0, 1, 2, 3])
    })
  )

  it.scoped("a restart indexes only up to the persisted replication checkpoint", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      yield* a.store.append("s", -2, evs(1, 2))
      const second = yield* a.store.append("s", -2, evs(3, 2))
      yield* pull(a.replica, b.replica)
      const upTo = second.position // inside the second append: a record boundary, committed to its start
      yield* b.replica.commitTo(upTo)
      const committed = b.replica.committed()
      assert.isAtMost(committed, upTo)
      yield* b.restart
      assert.strictEqual(b.replica.committed(), committed, "indexed to the replication checkpoint")
      assert.strictEqual(b.replica.writerCheckpoint(), a.replica.writerCheckpoint(), "the tail is kept")
      assert.deepStrictEqual(yield* streamNumbers(b.store, "s"), [0, 1])
      // No epoch is written at a clustered start.
      assert.strictEqual((yield* b.replica.epochs(10)).length, 1)
      yield* b.replica.commitTo(a.replica.committed())
      assert.deepStrictEqual(yield* streamNumbers(b.store, "s"), [0, 1, 2, 3])
    })
  )

  it.scoped("appendRaw refuses what does not continue this log exactly, writing nothing", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      yield* a.store.append("s", -2, evs(1, 3))
      const whole = (yield* sliceAt(a.replica, 0, 1 << 20))!
      const refusals = [
        { ...whole, position: 8, end: whole.end + 8 },
        { ...whole, bytes: whole.bytes.subarray(0, whole.bytes.length - 1), end: whole.end - 1 },
        { ...whole, end: whole.end + 1 },
        { ...whole, bytes: Uint8Array.from(whole.bytes, (x, i) => (i === 40 ? x ^ 1 : x)) }
      ]
      for (const bad of refusals) {
        const error = yield* Effect.flip(b.replica.appendRaw(bad))
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.strictEqual(b.replica.writerCheckpoint(), 0)
      }
      // A slice ending inside an append (its first record alone) is refused too.
      const records = yield* a.store.readAllForward(0, 10)
      const secondEvent = records.events.find((e) => e.event?.stream === "s" && e.event.eventNumber === 1)!.event!
      const partial = {
        ...whole,
        bytes: whole.bytes.subarray(0, secondEvent.logPosition),
        end: secondEvent.logPosition
      }
      const error = yield* Effect.flip(b.replica.appendRaw(partial))
      assert.strictEqual(error._tag, "InvalidRequest")
      assert.match(error.message, /inside a write unit/)
      yield* b.replica.appendRaw(whole)
      assert.strictEqual(b.replica.writerCheckpoint(), whole.end)
    })
  )

  it.scoped("readRaw ends at a unit's end, sends at least one unit, and refuses a position inside a record", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      const big = yield* a.store.append("s", -2, evs(1, 5))
      const tiny = (yield* sliceAt(a.replica, 0, 1))!
      // The epoch alone: a unit of its own.
      const epoch = (yield* a.replica.epochs(1))[0]!
      assert.strictEqual(tiny.position, epoch.position)
      const next = (yield* sliceAt(a.replica, tiny.end, 1))!
      assert.strictEqual(next.end, a.replica.writerCheckpoint(), "the five-event append whole, past maxBytes")
      assert.isAbove(big.position, tiny.end)
      const error = yield* Effect.flip(a.replica.readRaw(tiny.end + 3, 100))
      assert.strictEqual(error._tag, "InvalidRequest")
      assert.isUndefined(yield* a.replica.readRaw(a.replica.writerCheckpoint(), 100))
    })
  )
})
