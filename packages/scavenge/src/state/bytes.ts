/**
 * Little-endian byte writing and reading for the state's codecs (journal changes, snapshot pages, the page
 * directory). Plain TypeScript over Buffers: a commit or a page holds thousands of rows. Numbers are float64
 * so that every JS number (event numbers up to long.MaxValue included, as far as JS holds them) round-trips
 * exactly; strings are UTF-8 with a u32 length. Reading throws `CodecError`, which callers report as
 * StateCorrupt.
 */
export class CodecError extends Error {}

export class ByteWriter {
  private buf: Buffer
  private pos = 0

  constructor(initial = 1024) {
    this.buf = Buffer.alloc(initial)
  }

  get length(): number {
    return this.pos
  }

  /** Forgets everything written after `length` (to take back a row that did not fit a page). */
  truncate(length: number): void {
    this.pos = Math.min(this.pos, length)
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return
    const next = Buffer.alloc(Math.max(this.pos + extra, this.buf.length * 2))
    this.buf.copy(next, 0, 0, this.pos)
    this.buf = next
  }

  u8(v: number): void {
    this.ensure(1)
    this.buf[this.pos++] = v
  }

  u32(v: number): void {
    this.ensure(4)
    this.buf.writeUInt32LE(v, this.pos)
    this.pos += 4
  }

  f64(v: number): void {
    this.ensure(8)
    this.buf.writeDoubleLE(v, this.pos)
    this.pos += 8
  }

  optF64(v: number | undefined): void {
    this.u8(v === undefined ? 0 : 1)
    if (v !== undefined) this.f64(v)
  }

  str(s: string): void {
    const length = Buffer.byteLength(s, "utf8")
    this.u32(length)
    this.ensure(length)
    this.pos += this.buf.write(s, this.pos, length, "utf8")
  }

  raw(data: Uint8Array): void {
    this.ensure(data.length)
    this.buf.set(data, this.pos)
    this.pos += data.length
  }

  /** A view of the bytes written so far (valid until the next write). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos)
  }
}

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
