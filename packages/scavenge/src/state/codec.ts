/**
 * Binary codec of a `StateChange` (one journal transaction, or a whole snapshot). Plain TypeScript over
 * Buffers: a commit encodes tens of thousands of rows at once. Numbers are float64 so that every JS number
 * (event numbers up to long.MaxValue included, as far as JS holds them) round-trips exactly; strings are
 * UTF-8 with a u32 length. Decoding throws `CodecError`, which the caller reports as StateCorrupt.
 */
import type {
  CalculationStatus, Checkpoint, CheckpointStage, ChunkTimeRange, MetastreamData, OriginalStreamData, ScavengePointInfo, StateChange
} from "./types.js"

const FORMAT_VERSION = 1

export class CodecError extends Error {}

const STAGES: ReadonlyArray<CheckpointStage> = [
  "Accumulating", "Calculating", "ExecutingChunks", "MergingChunks", "ExecutingIndex", "Cleaning", "Done"
]
const STATUSES: ReadonlyArray<CalculationStatus> = ["Active", "Archived", "Spent"]

class ByteWriter {
  private buf: Buffer
  private pos = 0

  constructor(initial = 1024) {
    this.buf = Buffer.alloc(initial)
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

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos)
  }
}

class ByteReader {
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

// ---- values ----

const writeSp = (w: ByteWriter, sp: ScavengePointInfo): void => {
  w.f64(sp.position)
  w.f64(sp.number)
  w.f64(sp.effectiveNowMicros)
  w.f64(sp.threshold)
}

const readSp = (r: ByteReader): ScavengePointInfo => ({ position: r.f64(), number: r.f64(), effectiveNowMicros: r.f64(), threshold: r.f64() })

const writeCheckpoint = (w: ByteWriter, cp: Checkpoint | undefined): void => {
  w.u8(cp === undefined ? 0 : 1)
  if (cp === undefined) return
  w.u8(STAGES.indexOf(cp.stage))
  writeSp(w, cp.sp)
  if (cp.stage === "Accumulating" || cp.stage === "ExecutingChunks") w.optF64(cp.doneLogicalChunk)
  else if (cp.stage === "Calculating") {
    w.u8(cp.doneStream === undefined ? 0 : 1)
    if (cp.doneStream !== undefined) w.str(cp.doneStream)
  }
}

const readCheckpoint = (r: ByteReader): Checkpoint | undefined => {
  if (!r.flag()) return undefined
  const stage = r.oneOf(STAGES, "checkpoint stage")
  const sp = readSp(r)
  switch (stage) {
    case "Accumulating":
    case "ExecutingChunks":
      return { stage, sp, doneLogicalChunk: r.optF64() }
    case "Calculating":
      return { stage, sp, doneStream: r.flag() ? r.str() : undefined }
    default:
      return { stage, sp }
  }
}

const writeOriginal = (w: ByteWriter, d: OriginalStreamData): void => {
  w.u8(d.isTombstoned ? 1 : 0)
  w.u8(STATUSES.indexOf(d.status))
  w.optF64(d.maxAgeSeconds)
  w.optF64(d.maxCount)
  w.optF64(d.truncateBefore)
  w.f64(d.discardPoint)
  w.f64(d.maybeDiscardPoint)
  w.optF64(d.calculatedLast)
}

const readOriginal = (r: ByteReader): OriginalStreamData => {
  const data = {
    isTombstoned: r.flag(),
    status: r.oneOf(STATUSES, "status"),
    maxAgeSeconds: r.optF64(),
    maxCount: r.optF64(),
    truncateBefore: r.optF64(),
    discardPoint: r.f64(),
    maybeDiscardPoint: r.f64()
  }
  const calculatedLast = r.optF64()
  return calculatedLast === undefined ? data : { ...data, calculatedLast }
}

const writeMetastream = (w: ByteWriter, d: MetastreamData): void => {
  w.u8(d.isTombstoned ? 1 : 0)
  w.f64(d.discardPoint)
}

const readMetastream = (r: ByteReader): MetastreamData => ({ isTombstoned: r.flag(), discardPoint: r.f64() })

const writeRange = (w: ByteWriter, range: ChunkTimeRange): void => {
  w.f64(range.minMicros)
  w.f64(range.maxMicros)
}

const readRange = (r: ByteReader): ChunkTimeRange => ({ minMicros: r.f64(), maxMicros: r.f64() })

/** A table section: count, then (key, present flag, value when present). */
const writeSection = <K, V>(
  w: ByteWriter, entries: ReadonlyMap<K, V | null>, writeKey: (k: K) => void, writeValue: (w: ByteWriter, v: V) => void
): void => {
  w.u32(entries.size)
  for (const [key, value] of entries) {
    writeKey(key)
    w.u8(value === null ? 0 : 1)
    if (value !== null) writeValue(w, value)
  }
}

const readSection = <K, V>(r: ByteReader, readKey: () => K, readValue: (r: ByteReader) => V): Map<K, V | null> => {
  const out = new Map<K, V | null>()
  for (let n = r.u32(); n > 0; n--) {
    const key = readKey()
    out.set(key, r.flag() ? readValue(r) : null)
  }
  return out
}

// ---- changes ----

export const encodeChange = (change: StateChange): Buffer => {
  const w = new ByteWriter()
  w.u8(FORMAT_VERSION)
  writeCheckpoint(w, change.checkpoint)
  w.u8(change.clearMetastreams ? 1 : 0)
  writeSection(w, change.originals, (k) => w.str(k), writeOriginal)
  writeSection(w, change.metastreams, (k) => w.str(k), writeMetastream)
  writeSection(w, change.weights, (k) => w.f64(k), (w, v) => w.f64(v))
  writeSection(w, change.timeRanges, (k) => w.f64(k), writeRange)
  return w.bytes()
}

/** Throws CodecError when the payload is not a change this version wrote. */
export const decodeChange = (payload: Uint8Array): StateChange => {
  const r = new ByteReader(payload)
  const version = r.u8()
  if (version !== FORMAT_VERSION) throw new CodecError(`unknown format version ${version}`)
  const checkpoint = readCheckpoint(r)
  const clearMetastreams = r.flag()
  const originals = readSection(r, () => r.str(), readOriginal)
  const metastreams = readSection(r, () => r.str(), readMetastream)
  const weights = readSection(r, () => r.f64(), (r) => r.f64())
  const timeRanges = readSection(r, () => r.f64(), readRange)
  r.end()
  return { checkpoint, clearMetastreams, originals, metastreams, weights, timeRanges }
}
