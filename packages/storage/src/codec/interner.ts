/**
 * Decodes short UTF-8 strings through a small direct-mapped cache, so the stream names and event types
 * that repeat across a page of records (every event of a stream read, most of an `$all` page, a handful of
 * event types) come back as the same string without a native decode call or a new allocation each time.
 * A slot remembers the bytes it was decoded from and is reused only when they match exactly.
 */
const SLOTS = 512
const MAX_CACHED = 64

export class Utf8Interner {
  private readonly keys: Array<Uint8Array | undefined> = new Array(SLOTS)
  private readonly values: Array<string> = new Array(SLOTS)

  decode(buf: Buffer, start: number, end: number): string {
    const n = end - start
    if (n === 0) return ""
    if (n > MAX_CACHED) return buf.toString("utf8", start, end)
    // FNV-1a over the bytes picks the slot.
    let h = 0x811c9dc5
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193)
    const slot = (h >>> 0) % SLOTS
    const key = this.keys[slot]
    if (key !== undefined && key.length === n) {
      let same = true
      for (let i = 0; i < n; i++) {
        if (key[i] !== buf[start + i]) {
          same = false
          break
        }
      }
      if (same) return this.values[slot]!
    }
    const value = buf.toString("utf8", start, end)
    this.keys[slot] = Uint8Array.prototype.slice.call(buf, start, end)
    this.values[slot] = value
    return value
  }
}
