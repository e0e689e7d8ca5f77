/**
 * Little helpers for the binary formats: 64-bit integers as two u32 halves (positions and event numbers
 * are safe integers, < 2^53, so a double holds them exactly), UUIDs as 16 bytes, and a growable writer.
 * Plain code: these run per record on the hottest paths.
 */
const TWO_32 = 4294967296

/**
 * Little-endian u32 from plain byte reads, without Buffer's argument and bounds checks (cheaper in per-record
 * loops): the caller knows the four bytes are inside `buf`.
 */
export const readU32Unchecked = (buf: Uint8Array, o: number): number =>
  (buf[o]! | (buf[o + 1]! << 8) | (buf[o + 2]! << 16) | (buf[o + 3]! << 24)) >>> 0

/** Little-endian u32 as plain byte stores; the caller has made room (encoders size their buffer first). */
export const writeU32Unchecked = (buf: Uint8Array, o: number, value: number): void => {
  buf[o] = value
  buf[o + 1] = value >>> 8
  buf[o + 2] = value >>> 16
  buf[o + 3] = value >>> 24
}

export const writeU64 = (buf: Uint8Array, offset: number, value: number): void => {
  writeU32Unchecked(buf, offset, value >>> 0)
  writeU32Unchecked(buf, offset + 4, Math.floor(value / TWO_32) >>> 0)
}

/** Little-endian u64 (< 2^53); the caller knows the eight bytes are inside `buf` (decoders check lengths first). */
export const readU64 = (buf: Uint8Array, offset: number): number =>
  readU32Unchecked(buf, offset + 4) * TWO_32 + readU32Unchecked(buf, offset)

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

const HEX_DIGITS = "0123456789abcdef"
const HIGH_DIGIT = Uint8Array.from({ length: 256 }, (_, i) => HEX_DIGITS.charCodeAt(i >> 4))
const LOW_DIGIT = Uint8Array.from({ length: 256 }, (_, i) => HEX_DIGITS.charCodeAt(i & 15))
const DASH = 45

/**
 * Formats 16 bytes as a lowercase UUID string (8-4-4-4-12, bytes in order). One `fromCharCode` call makes a
 * flat string at once; concatenating 20 pieces built a rope that every later use had to flatten (4× slower,
 * and every read event pays it).
 */
export const uuidFromBytes = (b: Uint8Array, o: number): string => {
  const H = HIGH_DIGIT
  const L = LOW_DIGIT
  const x0 = b[o]!,
    x1 = b[o + 1]!,
    x2 = b[o + 2]!,
    x3 = b[o + 3]!,
    x4 = b[o + 4]!,
    x5 = b[o + 5]!,
    x6 = b[o + 6]!,
    x7 = b[o + 7]!
  const x8 = b[o + 8]!,
    x9 = b[o + 9]!,
    x10 = b[o + 10]!,
    x11 = b[o + 11]!,
    x12 = b[o + 12]!,
    x13 = b[o + 13]!,
    x14 = b[o + 14]!,
    x15 = b[o + 15]!
  return String.fromCharCode(
    H[x0]!,
    L[x0]!,
    H[x1]!,
    L[x1]!,
    H[x2]!,
    L[x2]!,
    H[x3]!,
    L[x3]!,
    DASH,
    H[x4]!,
    L[x4]!,
    H[x5]!,
    L[x5]!,
    DASH,
    H[x6]!,
    L[x6]!,
    H[x7]!,
    L[x7]!,
    DASH,
    H[x8]!,
    L[x8]!,
    H[x9]!,
    L[x9]!,
    DASH,
    H[x10]!,
    L[x10]!,
    H[x11]!,
    L[x11]!,
    H[x12]!,
    L[x12]!,
    H[x13]!,
    L[x13]!,
    H[x14]!,
    L[x14]!,
    H[x15]!,
    L[x15]!
  )
}

const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/

export const isUuid = (s: string): boolean => UUID_RE.test(s)

/**
 * Value of each hex digit by UTF-16 code unit, -1 for every other unit: any `charCodeAt` result indexes it
 * without a range check.
 */
const HEX_VALUE = (() => {
  const t = new Int8Array(65536).fill(-1)
  for (let i = 0; i < 10; i++) t[48 + i] = i
  for (let i = 0; i < 6; i++) t[65 + i] = t[97 + i] = 10 + i
  return t
})()

/**
 * The 16 bits of the four hex digits at `at`, negative when one is not a hex digit (a -1 shifted left keeps
 * the sign bit, and OR keeps it). `at + 3` must be inside the string (past it, a NaN would index as 0).
 */
const hex16 = (s: string, at: number): number =>
  (HEX_VALUE[s.charCodeAt(at)]! << 12) |
  (HEX_VALUE[s.charCodeAt(at + 1)]! << 8) |
  (HEX_VALUE[s.charCodeAt(at + 2)]! << 4) |
  HEX_VALUE[s.charCodeAt(at + 3)]!

/** Where the eight 4-digit groups of a UUID start, dashed (8-4-4-4-12) and plain. */
const DASHED_GROUPS = [0, 4, 9, 14, 19, 24, 28, 32] as const
const PLAIN_GROUPS = [0, 4, 8, 12, 16, 20, 24, 28] as const

/**
 * Writes a UUID string as 16 bytes; the caller has validated it with `isUuid` (dashes optional). A loop
 * over char codes: this runs for every record encoded, and a regex plus parseInt per byte was its cost
 * (the fixed-place parse of `uuidWords` measured no faster here).
 */
export const uuidToBytes = (uuid: string, buf: Uint8Array, offset: number): void => {
  let j = 0
  for (let i = 0; i < 16; i++) {
    if (uuid.charCodeAt(j) === 45) j++ // "-"
    buf[offset + i] = (HEX_VALUE[uuid.charCodeAt(j)]! << 4) | HEX_VALUE[uuid.charCodeAt(j + 1)]!
    j += 2
  }
}

/**
 * The four 32-bit words of a UUID string (dashed 8-4-4-4-12 or 32 plain digits, either case) into `out`;
 * false if it is not one. Checks as it goes: callers use it as the validation too. Four digits per step at
 * fixed places: the id cache parses every id written, and a loop testing for a dash at every digit was
 * ~1.5× slower.
 */
export const uuidWords = (uuid: string, out: Int32Array): boolean => {
  let groups: ReadonlyArray<number>
  if (uuid.length === 36) {
    if (
      uuid.charCodeAt(8) !== 45 ||
      uuid.charCodeAt(13) !== 45 ||
      uuid.charCodeAt(18) !== 45 ||
      uuid.charCodeAt(23) !== 45
    )
      return false
    groups = DASHED_GROUPS
  } else if (uuid.length === 32) {
    groups = PLAIN_GROUPS
  } else {
    return false
  }
  let bad = 0
  for (let w = 0; w < 4; w++) {
    const high = hex16(uuid, groups[2 * w]!)
    const low = hex16(uuid, groups[2 * w + 1]!)
    bad |= high | low
    out[w] = (high << 16) | low
  }
  return bad >= 0
}

/** Canonical lowercase, dashed form of a UUID string. */
export const normalizeUuid = (uuid: string): string => {
  const hex = uuid.replace(/-/g, "").toLowerCase()
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * An append-only byte buffer that grows by doubling. The log builds a whole write batch in it, encoding at
 * `length` with the offset helpers above after `ensure`; the scavenge state's codecs append little-endian
 * fields through the cursor methods below (numbers as float64, strings as UTF-8 with a u32 byte length).
 */
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

  /** Forgets everything written after `length` (to take back a row that did not fit a page). */
  truncate(length: number): void {
    this.length = Math.min(this.length, length)
  }

  u8(v: number): void {
    this.ensure(1)
    this.buf[this.length++] = v
  }

  u32(v: number): void {
    this.ensure(4)
    this.buf.writeUInt32LE(v, this.length)
    this.length += 4
  }

  f64(v: number): void {
    this.ensure(8)
    this.buf.writeDoubleLE(v, this.length)
    this.length += 8
  }

  /** A presence flag, then the number when there is one. */
  optF64(v: number | undefined): void {
    this.u8(v === undefined ? 0 : 1)
    if (v !== undefined) this.f64(v)
  }

  str(s: string): void {
    const length = Buffer.byteLength(s, "utf8")
    this.u32(length)
    this.ensure(length)
    this.length += this.buf.write(s, this.length, length, "utf8")
  }

  raw(data: Uint8Array): void {
    this.ensure(data.length)
    this.buf.set(data, this.length)
    this.length += data.length
  }

  /** A view of the bytes written so far (valid until the next write). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.length)
  }

  /** A copy of the bytes written so far (the caller may keep it while this writer is reused). */
  toBuffer(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.length))
  }
}
