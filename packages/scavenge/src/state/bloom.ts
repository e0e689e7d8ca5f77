/**
 * A Bloom filter over the names of one snapshot table: a lookup of a name the snapshot does not hold (most
 * streams have no metadata or tombstone) is answered without reading a page. The bits are the table index's
 * Bloom filter (@vellum/storage: 10 bits and 7 probes per key, about 1% false positives) over the name's
 * 64-bit stream hash (always the strong one, whatever hash the index is configured with); a false positive
 * only costs a page read.
 */
import {
  BLOOM_BITS_PER_KEY,
  BLOOM_PROBES,
  bloomAdd,
  bloomMayContain,
  bloomWordsFor,
  streamHash64
} from "@vellum/storage"
import type { ByteReader, ByteWriter } from "./bytes.js"

export class BloomFilter {
  private constructor(private readonly words: Uint32Array) {}

  /** An empty filter sized for up to `expected` names. */
  static forNames(expected: number): BloomFilter {
    return new BloomFilter(new Uint32Array(bloomWordsFor(expected)))
  }

  get bytes(): number {
    return this.words.byteLength
  }

  /** How many names it was sized for (more make false positives likelier). */
  get capacity(): number {
    return Math.floor((this.words.length * 32) / BLOOM_BITS_PER_KEY)
  }

  copy(): BloomFilter {
    return new BloomFilter(this.words.slice())
  }

  add(name: string): void {
    const { hi, lo } = streamHash64(name)
    bloomAdd(this.words, BLOOM_PROBES, hi, lo)
  }

  /** False: certainly absent. True: maybe present. */
  mightContain(name: string): boolean {
    const { hi, lo } = streamHash64(name)
    return bloomMayContain(this.words, BLOOM_PROBES, hi, lo)
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
