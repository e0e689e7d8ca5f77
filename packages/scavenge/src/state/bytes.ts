/**
 * Little-endian byte reading and writing for the state's codecs (journal changes, snapshot pages, the page
 * directory). Plain TypeScript over Buffers: a commit or a page holds thousands of rows. Numbers are float64
 * so that every JS number (event numbers up to long.MaxValue included, as far as JS holds them) round-trips
 * exactly; strings are UTF-8 with a u32 length. Reading throws `CodecError`, which callers report as
 * StateCorrupt.
 */
export class CodecError extends Error {}

/** The writer is storage's (one growable buffer for every binary format), re-exported beside its reader. */
export { ByteWriter } from "@vellum/storage"

export class ByteReader {
  private pos = 0
  private readonly view: Buffer

  constructor(data: Uint8Array) {
    this.view = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  }

  private need(n: number): number {
    const at = this.pos
    if (at + n > this.view.length) throw new CodecError(`truncated payload at byte ${at}`)
    this.pos += n
    return at
  }

  u8(): number {
    return this.view[this.need(1)]!
  }

  u32(): number {
    return this.view.readUInt32LE(this.need(4))
  }

  f64(): number {
    return this.view.readDoubleLE(this.need(8))
  }

  optF64(): number | undefined {
    return this.flag() ? this.f64() : undefined
  }

  flag(): boolean {
    const v = this.u8()
    if (v > 1) throw new CodecError(`bad flag ${v}`)
    return v === 1
  }

  str(): string {
    const length = this.u32()
    const at = this.need(length)
    return this.view.toString("utf8", at, at + length)
  }

  raw(length: number): Buffer {
    const at = this.need(length)
    return this.view.subarray(at, at + length)
  }

  oneOf<T>(values: ReadonlyArray<T>, what: string): T {
    const code = this.u8()
    const value = values[code]
    if (value === undefined) throw new CodecError(`bad ${what} code ${code}`)
    return value
  }

  end(): void {
    if (this.pos !== this.view.length) throw new CodecError(`${this.view.length - this.pos} unexpected trailing bytes`)
  }
}
