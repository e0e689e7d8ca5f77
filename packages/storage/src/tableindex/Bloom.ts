/**
 * A Bloom filter over 64-bit stream hashes, one per table, held in memory as a Uint32Array.
 *
 * About 10 bits per distinct hash and 7 probes (≈ 1% false positives). The probes are double hashing
 * (h1 + i·h2) over two mixes of the hash halves; the mixing matters because tests force collisions with
 * hashes that keep only a few bits. A false positive costs one fence search and maybe one block read;
 * a false negative would lose data, so a test checks there are none.
 */
import { fmix32 } from "./StreamHash.js"

export const BLOOM_BITS_PER_KEY = 10
export const BLOOM_PROBES = 7

/** Number of u32 words for `keys` distinct hashes (at least 2). */
export const bloomWordsFor = (keys: number): number => Math.max(2, Math.ceil((keys * BLOOM_BITS_PER_KEY) / 32))

const h1Of = (hi: number, lo: number): number => fmix32(lo ^ Math.imul(hi, 0x9e3779b1))
const h2Of = (hi: number, lo: number): number => (fmix32(hi ^ 0x5bd1e995 ^ Math.imul(lo, 0x85ebca6b)) | 1) >>> 0

export const bloomAdd = (words: Uint32Array, probes: number, hi: number, lo: number): void => {
  const bits = words.length * 32
  const h1 = h1Of(hi, lo)
  const h2 = h2Of(hi, lo)
  for (let i = 0; i < probes; i++) {
    const bit = ((h1 + Math.imul(i, h2)) >>> 0) % bits
    words[bit >>> 5] = (words[bit >>> 5]! | (1 << (bit & 31))) >>> 0
  }
}

export const bloomMayContain = (words: Uint32Array, probes: number, hi: number, lo: number): boolean => {
  const bits = words.length * 32
  const h1 = h1Of(hi, lo)
  const h2 = h2Of(hi, lo)
  for (let i = 0; i < probes; i++) {
    const bit = ((h1 + Math.imul(i, h2)) >>> 0) % bits
    if ((words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false
  }
  return true
}
