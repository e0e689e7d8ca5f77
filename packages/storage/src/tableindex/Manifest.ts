/**
 * The manifest ("indexmap"): which tables exist at which level, the log position they cover, and the next
 * table id. It is the index's only commit point.
 *
 * File (UTF-8 text, two lines):
 *   VELLUM-INDEXMAP 1 <CRC-32 of the second line's bytes, 8 hex digits>
 *   {"coveredPosition":…,"nextTableId":…,"tables":[{"id":…,"level":…,"file":"…"},…]}
 *
 * Saving writes `indexmap.tmp`, syncs it, renames it over `indexmap` and syncs the directory; a crash at
 * any point leaves either the old or the new manifest. The caller must have synced every listed table
 * *and* the directory before saving (so the tables' directory entries are durable too). A missing manifest
 * is an empty index; an unreadable one is IndexCorrupt (the caller rebuilds the index from the log).
 */
import { Effect, Schema } from "effect"
import { Disk, type DiskError, join } from "@vellum/platform"
import { checksum } from "../codec/checksum.js"
import { IndexCorrupt } from "./Entry.js"

export const MANIFEST_FILE = "indexmap"
export const MANIFEST_TMP = "indexmap.tmp"
const MAGIC = "VELLUM-INDEXMAP 1"

const NonNegativeInt = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

export const ManifestTable = Schema.Struct({
  id: NonNegativeInt,
  level: NonNegativeInt,
  file: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._-]+$/))
})
export type ManifestTable = typeof ManifestTable.Type

export const Manifest = Schema.Struct({
  /** Every log record below this position has its entries in the listed tables. */
  coveredPosition: NonNegativeInt,
  nextTableId: NonNegativeInt,
  tables: Schema.Array(ManifestTable)
})
export type Manifest = typeof Manifest.Type

export const emptyManifest: Manifest = { coveredPosition: 0, nextTableId: 1, tables: [] }

/** File name of table `id`: a counter, zero-padded so names sort by age. */
export const tableFileName = (id: number): string => `${String(id).padStart(10, "0")}.vtable`

export const encodeManifest = (m: Manifest): Buffer => {
  const body = Buffer.from(JSON.stringify(m), "utf8")
  const head = Buffer.from(`${MAGIC} ${checksum(body).toString(16).padStart(8, "0")}\n`, "utf8")
  return Buffer.concat([head, body, Buffer.from("\n")])
}

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson(Manifest))

/** Parses manifest bytes; a string says what is wrong. */
export const decodeManifest = (bytes: Buffer): Manifest | string => {
  const text = bytes.toString("utf8")
  const nl = text.indexOf("\n")
  if (nl < 0) return "no header line"
  const head = text.slice(0, nl)
  const match = /^VELLUM-INDEXMAP 1 ([0-9a-f]{8})$/.exec(head)
  if (match === null) return `bad header line ${JSON.stringify(head.slice(0, 40))}`
  const body = bytes.subarray(Buffer.byteLength(head, "utf8") + 1)
  const trimmed = body.length > 0 && body[body.length - 1] === 0x0a ? body.subarray(0, body.length - 1) : body
  if (checksum(trimmed).toString(16).padStart(8, "0") !== match[1]) return "CRC mismatch"
  const decoded = decodeJson(trimmed.toString("utf8"))
  if (decoded._tag === "Left") return `invalid content: ${decoded.left.message.split("\n")[0]}`
  const m = decoded.right
  const ids = new Set(m.tables.map((t) => t.id))
  if (ids.size !== m.tables.length) return "duplicate table ids"
  if (m.tables.some((t) => t.id >= m.nextTableId)) return "a table id is not below nextTableId"
  return m
}

/** Reads `dir/indexmap`; undefined when there is none. */
export const readManifest = (dir: string): Effect.Effect<Manifest | undefined, DiskError | IndexCorrupt, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const path = join(dir, MANIFEST_FILE)
    if (!(yield* disk.exists(path))) return undefined
    const read = Effect.acquireUseRelease(
      disk.open(path, { readOnly: true }),
      (h) => Effect.flatMap(h.size, (size) => h.read(0, size)),
      (h) => Effect.ignore(h.close)
    )
    let m = decodeManifest(yield* read)
    // Damage is read twice before it is believed (a bit flipped in transit is not damage on disk).
    if (typeof m === "string") m = decodeManifest(yield* read)
    if (typeof m === "string")
      return yield* Effect.fail(new IndexCorrupt({ path, message: `index manifest ${path}: ${m}` }))
    return m
  })

/** Durably replaces `dir/indexmap` with `m` (temp file, sync, rename, syncDir). */
export const writeManifest = (dir: string, m: Manifest): Effect.Effect<void, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const tmp = join(dir, MANIFEST_TMP)
    yield* Effect.acquireUseRelease(
      disk.open(tmp, { create: true }),
      (h) => Effect.andThen(h.truncate(0), Effect.andThen(h.write(0, encodeManifest(m)), h.sync)),
      (h) => Effect.ignore(h.close)
    )
    yield* disk.rename(tmp, join(dir, MANIFEST_FILE))
    yield* disk.syncDir(dir)
  })
