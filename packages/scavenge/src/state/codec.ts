/**
 * Binary codec of the state's values and of a `StateChange` (one journal transaction), over bytes.ts.
 * The value codecs are shared with the snapshot's pages and directory (pageFile.ts).
 */
import { ByteReader, ByteWriter, CodecError } from "./bytes.js"
import type {
  CalculationStatus,
  Checkpoint,
  CheckpointStage,
  ChunkTimeRange,
  MetastreamData,
  OriginalStreamData,
  ScavengePointInfo,
  SpentDeletion,
  StateChange
} from "./types.js"

export { CodecError }

/**
 * Version 2 added the wholesale Spent deletion, version 3 the original streams' `calculatedLastPosition`;
 * changes of versions 1 and 2 still decode.
 */
const FORMAT_VERSION = 3

const STAGES: ReadonlyArray<CheckpointStage> = [
  "Accumulating",
  "Calculating",
  "ExecutingChunks",
  "MergingChunks",
  "ExecutingIndex",
  "Cleaning",
  "Done"
]
const STATUSES: ReadonlyArray<CalculationStatus> = ["Active", "Archived", "Spent"]
const SPENT_DELETIONS: ReadonlyArray<SpentDeletion> = ["none", "spent", "spentOrArchived"]

// ---- values ----

const writeSp = (w: ByteWriter, sp: ScavengePointInfo): void => {
  w.f64(sp.position)
  w.f64(sp.number)
  w.f64(sp.effectiveNowMicros)
  w.f64(sp.threshold)
}

const readSp = (r: ByteReader): ScavengePointInfo => ({
  position: r.f64(),
  number: r.f64(),
  effectiveNowMicros: r.f64(),
  threshold: r.f64()
})

export const writeCheckpoint = (w: ByteWriter, cp: Checkpoint | undefined): void => {
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

export const readCheckpoint = (r: ByteReader): Checkpoint | undefined => {
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

export const writeOriginal = (w: ByteWriter, d: OriginalStreamData): void => {
  w.u8(d.isTombstoned ? 1 : 0)
  w.u8(STATUSES.indexOf(d.status))
  w.optF64(d.maxAgeSeconds)
  w.optF64(d.maxCount)
  w.optF64(d.truncateBefore)
  w.f64(d.discardPoint)
  w.f64(d.maybeDiscardPoint)
  w.optF64(d.calculatedLast)
  w.optF64(d.calculatedLastPosition)
}

/** Rows before format version 3 have no `calculatedLastPosition`. */
const readOriginalFields = (r: ByteReader, withLastPosition: boolean): OriginalStreamData => {
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
  const calculatedLastPosition = withLastPosition ? r.optF64() : undefined
  if (calculatedLast === undefined) return data
  return calculatedLastPosition === undefined
    ? { ...data, calculatedLast }
    : { ...data, calculatedLast, calculatedLastPosition }
}

export const readOriginal = (r: ByteReader): OriginalStreamData => readOriginalFields(r, true)
const readOriginalBeforeV3 = (r: ByteReader): OriginalStreamData => readOriginalFields(r, false)

export const writeMetastream = (w: ByteWriter, d: MetastreamData): void => {
  w.u8(d.isTombstoned ? 1 : 0)
  w.f64(d.discardPoint)
}

export const readMetastream = (r: ByteReader): MetastreamData => ({ isTombstoned: r.flag(), discardPoint: r.f64() })

export const writeRange = (w: ByteWriter, range: ChunkTimeRange): void => {
  w.f64(range.minMicros)
  w.f64(range.maxMicros)
}

export const readRange = (r: ByteReader): ChunkTimeRange => ({ minMicros: r.f64(), maxMicros: r.f64() })

/** A table section: count, then (key, present flag, value when present). */
export const writeSection = <K, V>(
  w: ByteWriter,
  entries: ReadonlyMap<K, V | null>,
  writeKey: (k: K) => void,
  writeValue: (w: ByteWriter, v: V) => void
): void => {
  w.u32(entries.size)
  for (const [key, value] of entries) {
    writeKey(key)
    w.u8(value === null ? 0 : 1)
    if (value !== null) writeValue(w, value)
  }
}

export const readSection = <K, V>(
  r: ByteReader,
  readKey: () => K,
  readValue: (r: ByteReader) => V
): Map<K, V | null> => {
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
  w.u8(SPENT_DELETIONS.indexOf(change.deleteSpent))
  writeSection(w, change.originals, (k) => w.str(k), writeOriginal)
  writeSection(w, change.metastreams, (k) => w.str(k), writeMetastream)
  writeSection(
    w,
    change.weights,
    (k) => w.f64(k),
    (w, v) => w.f64(v)
  )
  writeSection(w, change.timeRanges, (k) => w.f64(k), writeRange)
  return w.bytes()
}

/** Throws CodecError when the payload is not a change this version wrote. */
export const decodeChange = (payload: Uint8Array): StateChange => {
  const r = new ByteReader(payload)
  const version = r.u8()
  if (version < 1 || version > FORMAT_VERSION) throw new CodecError(`unknown format version ${version}`)
  const checkpoint = readCheckpoint(r)
  const clearMetastreams = r.flag()
  const deleteSpent = version === 1 ? "none" : r.oneOf(SPENT_DELETIONS, "spent deletion")
  const originals = readSection(r, () => r.str(), version >= 3 ? readOriginal : readOriginalBeforeV3)
  const metastreams = readSection(r, () => r.str(), readMetastream)
  const weights = readSection(
    r,
    () => r.f64(),
    (r) => r.f64()
  )
  const timeRanges = readSection(r, () => r.f64(), readRange)
  r.end()
  return { checkpoint, clearMetastreams, deleteSpent, originals, metastreams, weights, timeRanges }
}
