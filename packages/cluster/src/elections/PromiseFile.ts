/**
 * Where a node keeps its vote promise (the term it has seen, whom it voted for): a small file of two
 * slots written in turn, each a sequence number, the promise and a checksum, synced before the promise is
 * acted on. A write torn by a crash damages only the slot being written; opening takes the valid slot
 * with the higher sequence, so the last promise that was synced always survives. (The reference keeps
 * the same promise in `proposal.chk`.)
 *
 *   slot (256 bytes) = u32 checksum of the rest · f64 sequence · f64 term · u16 voter length · voter (UTF-8)
 */
import { Effect } from "effect"
import { Disk, DiskError, join, type FileHandle } from "@vellum/platform"
import { checksum } from "@vellum/storage"
import type { VotePromise } from "./Election.js"

export const PromiseFileName = "election.chk"
const SlotBytes = 256
const MaxVoterBytes = SlotBytes - 22

export interface PromiseFile {
  /** The last promise synced (term 0, no vote, for a new node). */
  readonly promise: VotePromise
  /** Writes and syncs the promise; it is kept once this returns. */
  readonly keep: (promise: VotePromise) => Effect.Effect<void, DiskError>
}

const encodeSlot = (sequence: number, promise: VotePromise): Buffer => {
  const slot = Buffer.alloc(SlotBytes)
  const voter = Buffer.from(promise.votedFor ?? "", "utf8")
  if (voter.length > MaxVoterBytes) throw new RangeError(`a voter name of ${voter.length} bytes`)
  slot.writeDoubleBE(sequence, 4)
  slot.writeDoubleBE(promise.term, 12)
  slot.writeUInt16BE(voter.length, 20)
  voter.copy(slot, 22)
  slot.writeUInt32BE(checksum(slot, 4) >>> 0, 0)
  return slot
}

const decodeSlot = (slot: Buffer): { sequence: number; promise: VotePromise } | undefined => {
  if (slot.length < SlotBytes || slot.readUInt32BE(0) !== checksum(slot, 4) >>> 0) return undefined
  const length = slot.readUInt16BE(20)
  if (length > MaxVoterBytes) return undefined
  const voter = slot.toString("utf8", 22, 22 + length)
  return {
    sequence: slot.readDoubleBE(4),
    promise: { term: slot.readDoubleBE(12), votedFor: voter === "" ? undefined : voter }
  }
}

/** Opens (creating) the promise file in `dir`, which must exist (the data directory); it closes with the scope. */
export const openPromiseFile = (dir: string) =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const path = join(dir, PromiseFileName)
    const handle: FileHandle = yield* Effect.acquireRelease(disk.open(path, { create: true }), (h) =>
      Effect.ignore(h.close)
    )
    yield* disk.syncDir(dir)
    const bytes = yield* handle.read(0, 2 * SlotBytes)
    const slots = [decodeSlot(bytes.subarray(0, SlotBytes)), decodeSlot(bytes.subarray(SlotBytes, 2 * SlotBytes))]
    const newest = slots.reduce<{ sequence: number; promise: VotePromise } | undefined>(
      (best, s) => (s !== undefined && (best === undefined || s.sequence > best.sequence) ? s : best),
      undefined
    )
    let sequence = newest?.sequence ?? 0
    const file: PromiseFile = {
      promise: newest?.promise ?? { term: 0, votedFor: undefined },
      keep: (promise) =>
        Effect.gen(function* () {
          const next = sequence + 1
          yield* handle.write((next % 2) * SlotBytes, encodeSlot(next, promise))
          yield* handle.sync
          sequence = next
        })
    }
    return file
  })
