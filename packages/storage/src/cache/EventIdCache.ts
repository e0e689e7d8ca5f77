/**
 * Recently written event ids (the reference's committed-events cache), bounded by count: id → the stream
 * and event number it was written as, so a retried append is answered as idempotent without a read.
 *
 * Every append looks its ids up and puts them, so this is on the hot path of single-event appends. It was a
 * `GenerationalCache<string, KnownEvent>`: two Maps of some 100,000 string keys each, holding one object
 * per id. A lookup in a Map that large missed the CPU caches (~1 µs), and the garbage collector traced every
 * key and object on each major collection. Here each generation is an open-addressing table over the id's
 * 128 bits in typed arrays (exact keys: no hashing of strings, nothing for the collector to trace but the
 * array of stream names), and a hit builds its `KnownEvent` only when asked.
 *
 * Eviction is the same as GenerationalCache with unit weights: puts go into the young generation; when it
 * holds half the capacity it becomes the old one and the previous old one is dropped whole; a hit in the old
 * generation is copied into the young one while that has room (a lookup never rotates).
 *
 * Ids are the canonical 36-character form the store writes (EventStore normalizes every id it accepts); a
 * string that is not a UUID is never cached.
 */
import { uuidWords } from "../codec/bytes.js"
import type { KnownEvent } from "../streams/commitCheck.js"

/** One generation: linear probing over a power-of-two table at most half full. */
class Generation {
  readonly keys: Int32Array
  readonly numbers: Float64Array
  /** The stream of each slot; undefined marks an empty slot. */
  readonly streams: Array<string | undefined>
  readonly mask: number
  count = 0

  constructor(maxEntries: number) {
    let size = 16
    while (size < maxEntries * 2) size *= 2
    this.mask = size - 1
    this.keys = new Int32Array(size * 4)
    this.numbers = new Float64Array(size)
    this.streams = new Array<string | undefined>(size).fill(undefined)
  }

  /** The slot where probing for an id starts. */
  private home(w0: number, w1: number, w2: number, w3: number): number {
    // Test ids often differ only in their last word, and random ones anywhere: mix all four.
    let h = Math.imul(w0 ^ Math.imul(w1, 0x85ebca6b) ^ Math.imul(w2, 0xc2b2ae35) ^ w3, 0x9e3779b1)
    h ^= h >>> 15
    return h & this.mask
  }

  /** The slot holding `w`, or the empty slot where it would go (as -1 - slot). */
  find(w: Int32Array): number {
    const keys = this.keys
    const w0 = w[0]!,
      w1 = w[1]!,
      w2 = w[2]!,
      w3 = w[3]!
    for (let slot = this.home(w0, w1, w2, w3); ; slot = (slot + 1) & this.mask) {
      if (this.streams[slot] === undefined) return -1 - slot
      const k = slot * 4
      if (keys[k] === w0 && keys[k + 1] === w1 && keys[k + 2] === w2 && keys[k + 3] === w3) return slot
    }
  }

  /** Writes the entry at `found` (a result of `find`); true if it took an empty slot. */
  store(found: number, w: Int32Array, stream: string, eventNumber: number): boolean {
    const fresh = found < 0
    const slot = fresh ? -1 - found : found
    const k = slot * 4
    this.keys[k] = w[0]!
    this.keys[k + 1] = w[1]!
    this.keys[k + 2] = w[2]!
    this.keys[k + 3] = w[3]!
    this.numbers[slot] = eventNumber
    this.streams[slot] = stream
    if (fresh) this.count++
    return fresh
  }

  /**
   * Removes `w` if it is here. Backward-shift deletion: later entries of the probe run move into the hole
   * when their home slot allows it, so every other id stays findable without tombstones.
   */
  remove(w: Int32Array): void {
    let hole = this.find(w)
    if (hole < 0) return
    const keys = this.keys
    for (let slot = (hole + 1) & this.mask; this.streams[slot] !== undefined; slot = (slot + 1) & this.mask) {
      const k = slot * 4
      const home = this.home(keys[k]!, keys[k + 1]!, keys[k + 2]!, keys[k + 3]!)
      // The entry stays when its home lies cyclically in (hole, slot]: moving it would put it before its home.
      const stays = hole <= slot ? home > hole && home <= slot : home > hole || home <= slot
      if (stays) continue
      keys.copyWithin(hole * 4, k, k + 4)
      this.numbers[hole] = this.numbers[slot]!
      this.streams[hole] = this.streams[slot]
      hole = slot
    }
    this.streams[hole] = undefined
    this.count--
  }

  clear(): void {
    this.streams.fill(undefined)
    this.count = 0
  }
}

export class EventIdCache {
  private young: Generation
  private old: Generation
  private readonly generationSize: number
  private readonly words = new Int32Array(4)

  /**
   * The most ids held at once: a full old generation and a young one one short of rotating (putting one
   * more would drop the old generation whole).
   */
  readonly window: number

  constructor(readonly capacity: number) {
    this.generationSize = Math.max(1, Math.floor(capacity / 2))
    this.window = Math.max(1, 2 * this.generationSize - 1)
    this.young = new Generation(this.generationSize)
    this.old = new Generation(this.generationSize)
  }

  get(eventId: string): KnownEvent | undefined {
    const w = this.words
    if (!uuidWords(eventId, w)) return undefined
    const inYoung = this.young.find(w)
    if (inYoung >= 0) return { stream: this.young.streams[inYoung]!, eventNumber: this.young.numbers[inYoung]! }
    const inOld = this.old.find(w)
    if (inOld < 0) return undefined
    const known = { stream: this.old.streams[inOld]!, eventNumber: this.old.numbers[inOld]! }
    if (this.young.count < this.generationSize) this.young.store(inYoung, w, known.stream, known.eventNumber)
    return known
  }

  /** Forgets an id (one a failed write had put: it was never written). */
  forget(eventId: string): void {
    const w = this.words
    if (!uuidWords(eventId, w)) return
    this.young.remove(w)
    this.old.remove(w)
  }

  put(eventId: string, known: KnownEvent): void {
    const w = this.words
    if (!uuidWords(eventId, w)) return
    this.storeYoung(this.young.find(w), w, known)
  }

  /**
   * As `put`, answering what the id was cached as before (what `get` would have answered), so a failed write
   * can put it back: one parse of the id, and a look in the old generation when the young one misses.
   */
  putReplacing(eventId: string, known: KnownEvent): KnownEvent | undefined {
    const w = this.words
    if (!uuidWords(eventId, w)) return undefined
    const inYoung = this.young.find(w)
    let replaced: KnownEvent | undefined
    if (inYoung >= 0) replaced = { stream: this.young.streams[inYoung]!, eventNumber: this.young.numbers[inYoung]! }
    else {
      const inOld = this.old.find(w)
      if (inOld >= 0) replaced = { stream: this.old.streams[inOld]!, eventNumber: this.old.numbers[inOld]! }
    }
    this.storeYoung(inYoung, w, known)
    return replaced
  }

  /** Stores into the young generation (`found` from its `find`); a full young generation becomes the old one. */
  private storeYoung(found: number, w: Int32Array, known: KnownEvent): void {
    // An older copy in the old generation is not looked for: the young one shadows it until it is dropped.
    if (!this.young.store(found, w, known.stream, known.eventNumber)) return
    if (this.young.count >= this.generationSize) {
      const dropped = this.old
      this.old = this.young
      dropped.clear()
      this.young = dropped
    }
  }
}
