/**
 * A durable 64-bit checkpoint (e.g. writer.chk: how far the log is durable).
 *
 * Two 16-byte slots (u64 value, u32 sequence, u32 CRC-32 of the first 12 bytes); each write goes to
 * the slot the previous write did not use, then syncs. A torn write can only damage the slot being
 * written, whose value was not yet acknowledged, so a read (the valid slot with the highest sequence)
 * always yields the last value whose write completed — the LMDB two-meta-pages idea. Sequence numbers are
 * compared modulo 2^32, so they may wrap.
 */
import { Effect } from "effect"
import { Disk, type DiskError, type FileHandle } from "@vellum/platform"
import { checksum } from "../codec/checksum.js"
import { readU64, writeU64 } from "../codec/bytes.js"

const SLOT = 16

export interface Checkpoint {
  readonly path: string
  /** The last value written (durable once `write` returned). */
  readonly value: () => number
  /** Writes and syncs a new value. */
  readonly write: (value: number) => Effect.Effect<void, DiskError>
  readonly close: Effect.Effect<void, DiskError>
}

const decodeSlot = (buf: Buffer, offset: number): { value: number; seq: number } | undefined => {
  if (buf.length < offset + SLOT) return undefined
  if (checksum(buf, offset, offset + 12) !== buf.readUInt32LE(offset + 12)) return undefined
  return { value: readU64(buf, offset), seq: buf.readUInt32LE(offset + 8) }
}

/** The value and sequence of a checkpoint file's bytes (the valid slot written last), or undefined. */
const newestSlot = (buf: Buffer): { value: number; seq: number } | undefined => {
  const a = decodeSlot(buf, 0)
  const b = decodeSlot(buf, SLOT)
  // The two slots hold consecutive sequence numbers, so compare them modulo 2^32 (serial-number
  // arithmetic): after 2^32 writes, sequence 0 is newer than 0xffffffff.
  return a && b ? (((a.seq - b.seq) | 0) >= 0 ? a : b) : (a ?? b)
}

/** The value a checkpoint file's bytes hold, or undefined when neither slot is valid (for tools and tests). */
export const readCheckpointValue = (bytes: Buffer): number | undefined => newestSlot(bytes)?.value

/** Opens (or creates with `initial`) a checkpoint file; `existed` tells whether the file was there. */
export const openCheckpoint = (path: string, initial: number) =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const existed = yield* disk.exists(path)
    const handle: FileHandle = yield* disk.open(path, { create: true })
    let value = initial
    let seq = 0
    if (existed) {
      const best = newestSlot(yield* handle.read(0, SLOT * 2))
      if (best !== undefined) {
        value = best.value
        seq = best.seq
      }
    }
    const slot = Buffer.alloc(SLOT)
    const encode = (next: number, nextSeq: number) => {
      writeU64(slot, 0, next)
      slot.writeUInt32LE(nextSeq, 8)
      slot.writeUInt32LE(checksum(slot, 0, 12), 12)
      return slot
    }
    if (!existed) {
      // Both slots' bytes at once (zeros, which no slot's checksum accepts), synced: no later write grows the
      // file, so one made while the disk is full (a recovery after a failed write) needs no space, however
      // few writes came before.
      yield* handle.write(0, Buffer.alloc(SLOT * 2))
      yield* handle.sync
    }
    const write = (next: number) =>
      Effect.suspend(() => {
        const nextSeq = (seq + 1) >>> 0
        return handle.write((nextSeq % 2) * SLOT, encode(next, nextSeq)).pipe(
          Effect.zipRight(handle.sync),
          Effect.tap(() =>
            Effect.sync(() => {
              seq = nextSeq
              value = next
            })
          )
        )
      })
    return { path, value: () => value, write, close: handle.close, existed } as Checkpoint & {
      readonly existed: boolean
    }
  })
