/**
 * A Bloom filter over the names of one snapshot table: a lookup of a name the snapshot does not hold (most
 * streams have no metadata or tombstone) is answered without reading a page. 10 bits and 7 probes per
 * name give about 1% false positives; a false positive only costs a page read.
 */
import type { ByteReader, ByteWriter } from "./bytes.js"

const BITS_PER_NAME = 10
const PROBES = 7

/** Two independent 32-bit hashes of the UTF-16 code units (FNV-1a and a multiply-xorshift), for double hashing. */
const hashes = (name: string): readonly [number, number] => {
  let a = 0x811c9dc5
  let b = 0x9747b28c
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
    b ^= b >>> 15
  }
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35)
  return [a >>> 0, (b ^ (b >>> 16)) | 1]
}

export class BloomFilter {
  private constructor(private readonly words: Uint32Array) {}

  /** An empty filter sized for up to `expected` names. */
  static forNames(expected: number): BloomFilter {
    return new BloomFilter(new Uint32Array(Math.max(2, Math.ceil((expected * BITS_PER_NAME) / 32))))
  }

  get bytes(): number {
    return this.words.byteLength
  }

  /** How many names it was sized for (more make false positives likelier). */
  get capacity(): number {
    return Math.floor((this.words.length * 32) / BITS_PER_NAME)
  }

  copy(): BloomFilter {
    return new BloomFilter(this.words.slice())
  }

  add(name: string): void {
    const bits = this.words.length * 32
    const [h1, h2] = hashes(name)
    for (let i = 0; i < PROBES; i++) {
      const at = ((h1 + Math.imul(i, h2)) >>> 0) % bits
      this.words[at >>> 5]! |= 1 << (at & 31)
    }
  }

  /** False: certainly absent. True: maybe present. */
  mightContain(name: string): boolean {
    const bits = this.words.length * 32
    const [h1, h2] = hashes(name)
    for (let i = 0; i < PROBES; i++) {
      const at = ((h1 + Math.imul(i, h2)) >>> 0) % bits
      if ((this.words[at >>> 5]! & (1 << (at & 31))) === 0) return false
    }
    return true
  }

  write(w: ByteWriter): void {
    w.u32(this.words.length)
    w.raw(new Uint8Array(this.words.buffer, this.words.byteOffset, this.words.byteLength))
  }

  static read(r: ByteReader): BloomFilter {
    const length = r.u32()
    const bytes = r.raw(length * 4)
    const words = new Uint32Array(length)
    new Uint8Array(words.buffer).set(bytes)
    return new BloomFilter(words)
  }
}
