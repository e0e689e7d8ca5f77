/**
 * 64-bit stream hashes for the table index.
 *
 * The index keys entries by a 64-bit hash of the stream name, held as two unsigned 32-bit halves so no
 * BigInt is needed anywhere on the hot path. The default hash is two *different* 32-bit algorithms over the
 * string's UTF-16LE code units (the reference server does the same of the storage spec):
 * - `hi` = MurmurHash3 x86_32,
 * - `lo` = xxHash32 (the standard algorithm, not the reference server's variant).
 * Two different algorithms rather than one with two seeds, because Murmur3 has seed-independent
 * multicollisions: an attacker who can name streams could otherwise collide both halves at once.
 *
 * Collisions are allowed and handled at read time (the caller checks every table hit against the record),
 * so the hash is injectable: tests and the simulator pass a weak one (e.g. keeping 2–3 bits) to force them.
 * Both functions read code units straight from the string: no encoding, no allocation besides the result.
 */

/** A 64-bit hash as two unsigned 32-bit halves; the index orders by (hi, lo). */
export interface StreamHash {
  readonly hi: number
  readonly lo: number
}

export type HashFn = (stream: string) => StreamHash

const SEED = 0xc58f1a7b

const M1 = 0xcc9e2d51
const M2 = 0x1b873593

/** MurmurHash3 x86_32 of the UTF-16LE bytes of `s`. */
export const murmur3Utf16 = (s: string, seed: number = SEED): number => {
  let h = seed | 0
  const n = s.length
  const pairs = n & ~1
  let i = 0
  for (; i < pairs; i += 2) {
    let k = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16)
    k = Math.imul(k, M1)
    k = (k << 15) | (k >>> 17)
    k = Math.imul(k, M2)
    h ^= k
    h = (h << 13) | (h >>> 19)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  if (i < n) {
    // Tail of 2 bytes (one code unit).
    let k = s.charCodeAt(i)
    k = Math.imul(k, M1)
    k = (k << 15) | (k >>> 17)
    k = Math.imul(k, M2)
    h ^= k
  }
  h ^= n * 2
  return fmix32(h)
}

const P1 = 0x9e3779b1
const P2 = 0x85ebca77
const P3 = 0xc2b2ae3d
const P4 = 0x27d4eb2f
const P5 = 0x165667b1

const round = (acc: number, lane: number): number => {
  acc = (acc + Math.imul(lane, P2)) | 0
  acc = (acc << 13) | (acc >>> 19)
  return Math.imul(acc, P1)
}

/** xxHash32 of the UTF-16LE bytes of `s` (each 4-byte lane is two code units). */
export const xxh32Utf16 = (s: string, seed: number = SEED): number => {
  const n = s.length
  let i = 0
  let h: number
  if (n >= 8) {
    // 16-byte stripes = 8 code units.
    let v1 = (seed + P1 + P2) | 0
    let v2 = (seed + P2) | 0
    let v3 = seed | 0
    let v4 = (seed - P1) | 0
    const limit = n - 8
    for (; i <= limit; i += 8) {
      v1 = round(v1, s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16))
      v2 = round(v2, s.charCodeAt(i + 2) | (s.charCodeAt(i + 3) << 16))
      v3 = round(v3, s.charCodeAt(i + 4) | (s.charCodeAt(i + 5) << 16))
      v4 = round(v4, s.charCodeAt(i + 6) | (s.charCodeAt(i + 7) << 16))
    }
    h =
      (((v1 << 1) | (v1 >>> 31)) +
        ((v2 << 7) | (v2 >>> 25)) +
        ((v3 << 12) | (v3 >>> 20)) +
        ((v4 << 18) | (v4 >>> 14))) |
      0
  } else {
    h = (seed + P5) | 0
  }
  h = (h + n * 2) | 0
  for (; i + 1 < n; i += 2) {
    h = (h + Math.imul(s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16), P3)) | 0
    h = Math.imul((h << 17) | (h >>> 15), P4)
  }
  if (i < n) {
    // The last code unit is two single bytes in xxh32's byte tail.
    const c = s.charCodeAt(i)
    h = (h + Math.imul(c & 0xff, P5)) | 0
    h = Math.imul((h << 11) | (h >>> 21), P1)
    h = (h + Math.imul(c >>> 8, P5)) | 0
    h = Math.imul((h << 11) | (h >>> 21), P1)
  }
  h ^= h >>> 15
  h = Math.imul(h, P2)
  h ^= h >>> 13
  h = Math.imul(h, P3)
  h ^= h >>> 16
  return h >>> 0
}

/** Murmur3's finaliser: a cheap, good 32-bit mixer (also used by the Bloom filter). */
export const fmix32 = (h: number): number => {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** The default stream hash: hi = Murmur3 x86_32, lo = xxHash32, both over UTF-16LE. */
export const streamHash64: HashFn = (stream) => ({ hi: murmur3Utf16(stream), lo: xxh32Utf16(stream) })

/** A deliberately weak hash for tests and the simulator: only `bits` (≤ 32) bits of the default survive. */
export const weakHash = (bits: number): HashFn => {
  const mask = bits >= 32 ? 0xffffffff : (1 << bits) - 1
  return (stream) => ({ hi: 0, lo: (murmur3Utf16(stream) & mask) >>> 0 })
}

/** Total order of hashes: by hi, then lo (both unsigned). */
export const compareHash = (aHi: number, aLo: number, bHi: number, bLo: number): number =>
  aHi !== bHi ? (aHi < bHi ? -1 : 1) : aLo !== bLo ? (aLo < bLo ? -1 : 1) : 0
