/**
 * Little helpers for the binary formats: 64-bit integers as two u32 halves (positions and event numbers
 * are safe integers, < 2^53, so a double holds them exactly), UUIDs as 16 bytes, and a growable writer.
 * Plain code: these run per record on the hottest paths.
 */
const TWO_32 = 4294967296

export const writeU64 = (buf: Uint8Array, offset: number, value: number): void => {
  const view = buf as Buffer
  const hi = Math.floor(value / TWO_32)
  view.writeUInt32LE(value >>> 0, offset)
  view.writeUInt32LE(hi >>> 0, offset + 4)
}

export const readU64 = (buf: Uint8Array, offset: number): number => {
  const view = buf as Buffer
  return view.readUInt32LE(offset + 4) * TWO_32 + view.readUInt32LE(offset)
}

/** Signed 64-bit for values that may be negative (e.g. -1 meaning "none"); range ±2^53. */
export const writeI64 = (buf: Uint8Array, offset: number, value: number): void => {
  const view = buf as Buffer
  const lo = value >>> 0
  const hi = Math.floor(value / TWO_32)
  view.writeUInt32LE(lo, offset)
  view.writeInt32LE(hi | 0, offset + 4)
}

export const readI64 = (buf: Uint8Array, offset: number): number => {
  const view = buf as Buffer
  return view.readInt32LE(offset + 4) * TWO_32 + view.readUInt32LE(offset)
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

/** Formats 16 bytes as a lowercase UUID string (8-4-4-4-12, bytes in order). */
export const uuidFromBytes = (buf: Uint8Array, offset: number): string => {
  let s = ""
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += "-"
    s += HEX[buf[offset + i]!]
  }
  return s
}

const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/

export const isUuid = (s: string): boolean => UUID_RE.test(s)

/** Value of each ASCII hex digit by char code (-1 otherwise). */
const HEX_VALUE = (() => {
  const t = new Int8Array(128).fill(-1)
  for (let i = 0; i < 10; i++) t[48 + i] = i
  for (let i = 0; i < 6; i++) t[65 + i] = t[97 + i] = 10 + i
  return t
})()

/**
 * Writes a UUID string as 16 bytes; the caller has validated it with `isUuid` (dashes optional). A loop
 * over char codes: this runs for every record encoded, and a regex plus parseInt per byte was its cost.
 */
export const uuidToBytes = (uuid: string, buf: Uint8Array, offset: number): void => {
  let j = 0
  for (let i = 0; i < 16; i++) {
    if (uuid.charCodeAt(j) === 45) j++ // "-"
    buf[offset + i] = (HEX_VALUE[uuid.charCodeAt(j)]! << 4) | HEX_VALUE[uuid.charCodeAt(j + 1)]!
    j += 2
  }
}

/** Canonical lowercase, dashed form of a UUID string. */
export const normalizeUuid = (uuid: string): string => {
  const hex = uuid.replace(/-/g, "").toLowerCase()
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** An append-only byte buffer that grows by doubling; used to build a whole write batch in one Buffer. */
export class ByteWriter {
  buf: Buffer
  length = 0

  constructor(initialCapacity = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialCapacity)
  }

  ensure(extra: number): void {
    const need = this.length + extra
    if (need <= this.buf.length) return
    let cap = this.buf.length * 2
    while (cap < need) cap *= 2
    const next = Buffer.allocUnsafe(cap)
    this.buf.copy(next, 0, 0, this.length)
    this.buf = next
  }

  reset(): void {
    this.length = 0
  }

  /** A copy of the bytes written so far (the caller may keep it while this writer is reused). */
  toBuffer(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.length))
  }
}
