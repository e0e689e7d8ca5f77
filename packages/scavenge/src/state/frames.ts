/**
 * CRC-framed records, the unit of the journal and of the snapshot file.
 *
 * Layout (little-endian): magic u32 | crc u32 | payloadLength u32 | frameLength u32 | seq f64 | payload |
 * zero padding. The CRC-32 covers everything from payloadLength to the end of the payload. `frameLength`
 * is the padded size: each frame is padded to a whole number of pages, so the next frame starts on a page
 * boundary and a commit never rewrites a page that holds an earlier, already synced frame (a torn write on
 * a real disk can then only damage the frame being written). Storing the padded size keeps old journals
 * readable when the configured page size changes.
 */
import { checksum } from "@vellum/storage"

const MAGIC = 0x314a5356 // "VSJ1"
export const FRAME_HEADER_BYTES = 24

export interface Frame {
  readonly seq: number
  readonly payload: Buffer
  /** Offset just past this frame (padding included). */
  readonly end: number
}

export const encodeFrame = (seq: number, payload: Uint8Array, pageSize: number): Buffer => {
  const used = FRAME_HEADER_BYTES + payload.length
  const frameLength = Math.ceil(used / pageSize) * pageSize
  const out = Buffer.alloc(frameLength)
  out.writeUInt32LE(MAGIC, 0)
  out.writeUInt32LE(payload.length, 8)
  out.writeUInt32LE(frameLength, 12)
  out.writeDoubleLE(seq, 16)
  out.set(payload, FRAME_HEADER_BYTES)
  out.writeUInt32LE(checksum(out, 8, used), 4)
  return out
}

/**
 * The frame at `offset`, "torn" when the bytes end inside it (a write that never completed), or "invalid"
 * when the bytes there are not a frame (zeros left by a crash, or damage).
 */
export const parseFrame = (buf: Buffer, offset: number): Frame | "torn" | "invalid" => {
  if (offset + FRAME_HEADER_BYTES > buf.length) return "torn"
  if (buf.readUInt32LE(offset) !== MAGIC) return "invalid"
  const payloadLength = buf.readUInt32LE(offset + 8)
  const frameLength = buf.readUInt32LE(offset + 12)
  const used = FRAME_HEADER_BYTES + payloadLength
  if (frameLength < used) return "invalid"
  if (offset + frameLength > buf.length) return "torn"
  if (checksum(buf, offset + 8, offset + used) !== buf.readUInt32LE(offset + 4)) return "invalid"
  const seq = buf.readDoubleLE(offset + 16)
  if (!Number.isSafeInteger(seq) || seq < 1) return "invalid"
  return { seq, payload: buf.subarray(offset + FRAME_HEADER_BYTES, offset + used), end: offset + frameLength }
}

export interface JournalScan {
  readonly frames: ReadonlyArray<Frame>
  /** Where the valid frames end; bytes past it are a torn or abandoned tail. */
  readonly validEnd: number
  /**
   * A valid frame exists somewhere after the first bad one: the damage is in the middle of the journal,
   * not a tail a crash could leave, and cutting there would drop committed transactions.
   */
  readonly damagedInside: boolean
}

/** Every consecutive valid frame from the start of `buf`. */
export const scanFrames = (buf: Buffer): JournalScan => {
  const frames: Array<Frame> = []
  let offset = 0
  while (offset < buf.length) {
    const frame = parseFrame(buf, offset)
    if (typeof frame === "string") break
    frames.push(frame)
    offset = frame.end
  }
  return { frames, validEnd: offset, damagedInside: offset < buf.length && validFrameAfter(buf, offset + 1) }
}

const MAGIC_BYTES = (() => {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(MAGIC, 0)
  return b
})()

const validFrameAfter = (buf: Buffer, from: number): boolean => {
  for (let at = buf.indexOf(MAGIC_BYTES, from); at >= 0; at = buf.indexOf(MAGIC_BYTES, at + 1)) {
    if (typeof parseFrame(buf, at) !== "string") return true
  }
  return false
}
