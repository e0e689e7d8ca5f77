/**
 * Scavenged chunks are replicated whole: a follower whose next position lies in a chunk the leader has
 * scavenged (its records no longer at contiguous positions) receives the chunk's file as it lies on disk,
 * in pieces, installs it in place of what it holds of that range — its partly written active chunk
 * included — and follows the rest of the log from the chunk's end, holding the leader's records byte for
 * byte. Records the leader's scavenge removed read as absent on the follower too, index entries or not.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { isRawChunk, type RawChunk } from "../src/index.js"
import { powerCutDisk, type PowerCut } from "./log-support.js"
import { ev, evs, json, readAll, streamIds, streamNumbers } from "./streams-harness.js"
import { ID_A, chunkPieces, follow, openGate, openNode, pull, rawLog, sliceAt, type Node } from "./replica-support.js"

/** $maxCount 2 on "capped", so a scavenge may remove all but its last two events. */
const capMetadata = { ...ev(9000, { type: "$metadata" }), data: json({ $maxCount: 2 }) }

/** A leader with ~5 chunks of log: "capped" (most of its events hidden by $maxCount) between other streams. */
const leaderWithLog = Effect.gen(function* () {
  const leader = yield* openNode()
  yield* leader.replica.lead(1, ID_A, openGate)
  yield* leader.store.append("$$capped", -2, [capMetadata])
  for (let i = 0; leader.replica.writerCheckpoint() < 4 * leader.replica.chunkSize; i++)
    yield* leader.store.append(i % 3 === 0 ? "kept" : "capped", -2, evs(i * 10, 2))
  yield* leader.store.writeScavengePoint(0, 0)
  return leader
})

/**
 * The leader scavenges chunks first..last into one file, dropping the events of "capped" that $maxCount
 * hides (what a node scavenge would drop); returns the positions it removed.
 */
const scavenge = (node: Node, first: number, last: number) =>
  Effect.gen(function* () {
    const last2 = (yield* streamNumbers(node.store, "capped")).slice(-2)
    const removed: Array<number> = []
    yield* node.store.engine.log.replaceChunks(first, last, (record) => {
      const drop = record.stream === "capped" && !last2.includes(record.eventNumber)
      if (drop) removed.push(record.logPosition)
      return !drop
    })
    return removed
  })

/** The follower copies the leader's slices until its log reaches `position`. */
const pullPast = (a: Node, b: Node, position: number) =>
  Effect.gen(function* () {
    while (b.replica.writerCheckpoint() < position)
      yield* b.replica.appendRaw((yield* sliceAt(a.replica, b.replica.writerCheckpoint(), 300))!)
  })

const sameLogs = (a: Node, b: Node) =>
  Effect.gen(function* () {
    assert.strictEqual(b.replica.writerCheckpoint(), a.replica.writerCheckpoint())
    assert.deepStrictEqual(yield* rawLog(b.replica), yield* rawLog(a.replica))
    assert.deepStrictEqual(yield* readAll(b.store), yield* readAll(a.store))
    assert.deepStrictEqual(yield* streamIds(b.store, "kept"), yield* streamIds(a.store, "kept"))
    assert.deepStrictEqual(yield* streamIds(b.store, "capped"), yield* streamIds(a.store, "capped"))
    assert.deepStrictEqual(yield* b.replica.epochs(5), yield* a.replica.epochs(5))
  })

describe("replica: scavenged chunks are replicated whole", () => {
  it.scoped(
    "readRaw inside a scavenged chunk gives its file as it lies on disk, in pieces, from any position in it",
    () =>
      Effect.gen(function* () {
        const a = yield* leaderWithLog
        yield* scavenge(a, 0, 1)
        const file = a.store.engine.log.chunkAt(0)!
        const onDisk = yield* file.handle.read(0, yield* file.handle.size)
        for (const from of [0, a.replica.chunkSize + 100]) {
          const pieces = yield* chunkPieces(a.replica, from, 1000)
          assert.isAbove(pieces.length, 2, "several pieces")
          for (const piece of pieces) {
            assert.strictEqual(piece.startNumber, 0)
            assert.strictEqual(piece.endNumber, 1)
            assert.strictEqual(piece.chunkId, file.header.chunkId)
            assert.strictEqual(piece.fileSize, onDisk.length)
            assert.isAtMost(piece.bytes.length, 1000)
          }
          assert.deepStrictEqual(Buffer.concat(pieces.map((p) => p.bytes)), onDisk)
        }
        const past = yield* Effect.flip(a.replica.readRaw(0, 1000, onDisk.length))
        assert.strictEqual(past._tag, "InvalidRequest")
        // The chunk after it is sent record by record as before.
        assert.isDefined(yield* sliceAt(a.replica, 2 * a.replica.chunkSize, 1000))
      })
  )

  it.scoped("a follower with an empty log installs the file and follows the rest byte for byte", () =>
    Effect.gen(function* () {
      const a = yield* leaderWithLog
      const removed = yield* scavenge(a, 0, 1)
      assert.isNotEmpty(removed)
      yield* a.store.append("after", -2, evs(5000, 3))
      const b = yield* openNode()
      yield* follow(a.replica, b.replica)
      yield* sameLogs(a, b)
      for (const position of removed)
        assert.isUndefined(yield* b.store.engine.log.readRecord(position, b.replica.writerCheckpoint()))
      yield* b.restart
      yield* sameLogs(a, b)
    })
  )

  it.scoped(
    "a follower inside the range (a partial active chunk, index entries of removed records) installs it over its own files",
    () =>
      Effect.gen(function* () {
        const a = yield* leaderWithLog
        const b = yield* openNode()
        // The follower holds chunk 0 and part of chunk 1, and has committed (indexed) some of it.
        yield* pullPast(a, b, a.replica.chunkSize + 500)
        const behind = b.replica.writerCheckpoint()
        yield* b.replica.commitTo(a.replica.chunkSize + 100)
        const cappedBefore = yield* streamIds(b.store, "capped")
        assert.isNotEmpty(cappedBefore)
        // The leader merges chunks 0..2 and drops the capped events; then takes more writes.
        const removed = yield* scavenge(a, 0, 2)
        yield* a.store.append("after", -2, evs(5000, 3))
        const first = yield* a.replica.readRaw(behind, 700)
        assert.isTrue(first !== undefined && isRawChunk(first), "the follower's position is in the scavenged file")
        yield* follow(a.replica, b.replica)
        yield* sameLogs(a, b)
        // Index entries the follower made before the install point at records that are gone: absent now.
        const removedSeen = removed.filter((p) => p < a.replica.chunkSize + 100)
        assert.isNotEmpty(removedSeen)
        for (const position of removedSeen)
          assert.isUndefined(yield* b.store.engine.log.readRecord(position, b.replica.writerCheckpoint()))
        // The replaced files are gone from the disk; the log is one file for chunks 0..2, then the rest.
        const names = (yield* b.mem.service.list("/db")).filter((n) => n.startsWith("chunk-")).sort()
        assert.strictEqual(names[0], "chunk-000000.000001")
        assert.isFalse(names.some((n) => n.startsWith("chunk-000001") || n.startsWith("chunk-000002")))
        // A local scavenge that chose its range from the files before the install fails its run, not the node.
        const stale = yield* Effect.flip(b.store.engine.log.replaceChunks(0, 0, () => true))
        assert.strictEqual(stale._tag, "StorageFailed")
        assert.match(stale.message, /installed from the leader/)
        yield* b.restart
        yield* sameLogs(a, b)
      })
  )

  it.scoped("pieces out of order, another file's piece, or a damaged file are refused and change nothing", () =>
    Effect.gen(function* () {
      const a = yield* leaderWithLog
      yield* scavenge(a, 0, 1)
      const b = yield* openNode()
      const pieces = yield* chunkPieces(a.replica, 0, 500)
      const refuse = (piece: RawChunk, why: RegExp) =>
        Effect.gen(function* () {
          const error = yield* Effect.flip(b.replica.installChunk(piece))
          assert.strictEqual(error._tag, "InvalidRequest")
          assert.match(error.message, why)
          assert.strictEqual(b.replica.writerCheckpoint(), 0)
        })
      // A piece that continues no file.
      yield* refuse(pieces[1]!, /continues no file/)
      // A gap.
      yield* b.replica.installChunk(pieces[0]!)
      yield* refuse(pieces[2]!, /continues no file/)
      // A flipped bit in the data: the whole-file checksum catches it.
      yield* b.replica.installChunk(pieces[0]!)
      for (const piece of pieces.slice(1, -1)) yield* b.replica.installChunk(piece)
      const lastPiece = pieces[pieces.length - 1]!
      const flipped = { ...lastPiece, bytes: Uint8Array.from(lastPiece.bytes, (x, i) => (i === 0 ? x ^ 1 : x)) }
      yield* refuse(flipped, /checksum|footer|map/)
      // A file that does not cover the follower's position.
      const later = { ...pieces[0]!, startNumber: 3, endNumber: 3 }
      yield* refuse(later, /outside it/)
      // No temp file is left behind, and the follower still takes the file whole.
      assert.isFalse((yield* b.mem.service.list("/db")).some((n) => n.endsWith(".tmp")))
      for (const piece of pieces) yield* b.replica.installChunk(piece)
      assert.strictEqual(b.replica.writerCheckpoint(), 2 * a.replica.chunkSize)
      yield* pull(a.replica, b.replica)
      yield* b.replica.commitTo(a.replica.committed())
      yield* sameLogs(a, b)
    })
  )

  it.scoped("a disk error after the switch's commit point refuses writes until the install is finished", () =>
    Effect.gen(function* () {
      const a = yield* leaderWithLog
      yield* scavenge(a, 0, 1)
      const mem = new MemoryDisk()
      // The disk fails at the creation of the chunk after the installed range, and stays failed.
      const cut: PowerCut = {
        budget: Number.POSITIVE_INFINITY,
        used: 0,
        cutAt: undefined,
        when: (op, path) => op === "open" && path.includes("chunk-000002")
      }
      const b = yield* openNode({ mem, disk: powerCutDisk(mem, cut) })
      const pieces = yield* chunkPieces(a.replica, 0, 700)
      const failed = yield* Effect.flip(
        Effect.forEach(pieces, (piece) => b.replica.installChunk(piece), { discard: true })
      )
      assert.strictEqual(failed._tag, "StorageFailed")
      assert.strictEqual(b.replica.writerCheckpoint(), 0, "the checkpoint has not moved")
      assert.strictEqual(b.store.engine.log.chunkAt(0)!.header.chunkId, pieces[0]!.chunkId, "the file is in use")
      assert.isDefined(b.store.engine.log.failure(), "writes are refused")
      // The disk works again: the next change of the log finishes the install, and the leader's resent
      // pieces of the file change nothing.
      cut.budget = Number.POSITIVE_INFINITY
      cut.used = 0
      yield* follow(a.replica, b.replica)
      assert.isUndefined(b.store.engine.log.failure())
      yield* sameLogs(a, b)
      yield* b.restart
      yield* sameLogs(a, b)
    })
  )

  it.scoped(
    "a follower whose own merged file straddles the start of the leader's range refuses the file, keeping its log",
    () =>
      Effect.gen(function* () {
        const a = yield* leaderWithLog
        const b = yield* openNode()
        // The follower holds chunks 0 and 1 and part of chunk 2, and merges its chunks 0..1.
        yield* pullPast(a, b, 2 * a.replica.chunkSize + 300)
        yield* b.store.engine.log.replaceChunks(0, 1, () => true)
        const writer = b.replica.writerCheckpoint()
        // The leader merges chunks 1..3 instead.
        yield* scavenge(a, 1, 3)
        const error = yield* Effect.flip(pull(a.replica, b.replica))
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.match((error as { message: string }).message, /starts before it/)
        assert.strictEqual(b.replica.writerCheckpoint(), writer)
        assert.isFalse((yield* b.mem.service.list("/db")).some((n) => n.endsWith(".tmp")))
      })
  )
})
