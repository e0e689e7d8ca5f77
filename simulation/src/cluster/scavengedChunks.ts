/**
 * After every member has scavenged to the same scavenge point, what their chunks hold up to that point
 * must be identical: the point fixes what each chunk keeps (the same records, the same stream state as of
 * the point, the same EffectiveNow), and replication keeps chunk boundaries.
 *
 * - Records: below the end of the point's chunk, every member holds exactly the same records (position and
 *   content) — nothing scavenged on one member and kept on another (`compareRecordsBelow`).
 * - Files: a completed chunk file that covers the same chunks on two members, all of them up to the
 *   point's chunk, is byte-identical but for what is each node's own — a chunk's id (drawn by the node that
 *   created it; a scavenged chunk's id is derived from its sources') and the checksums that cover it, which
 *   are masked. Files may cover different ranges: merging walks every completed chunk, past the point too
 *   (as the reference's does), so a member whose next chunk was already complete when it ran merged it in.
 *
 * A member's chunk files are read from its MemoryDisk as the log opens them: from chunk 0, the highest
 * version of the file starting there, then the file after its last chunk.
 */
import type { MemoryDisk } from "@vellum/platform"
import type { LogImage } from "./logImages.js"

/** One completed chunk file, its node-specific bytes masked. */
export interface ChunkFileImage {
  readonly name: string
  readonly startNumber: number
  readonly endNumber: number
  readonly bytes: Buffer
}

export interface ChunkImages {
  readonly node: string
  readonly files: ReadonlyArray<ChunkFileImage>
}

const HeaderSize = 128
const FooterSize = 128
const FooterMagic = 0x46434c56 // "VLCF"
/** Header: the chunk id (19..35) and the header checksum (124..128); footer: the file and footer checksums. */
const masked = (file: Buffer): Buffer => {
  const out = Buffer.from(file)
  out.fill(0, 19, 35)
  out.fill(0, 124, 128)
  out.fill(0, out.length - 8, out.length)
  return out
}

const isCompleted = (file: Buffer): boolean =>
  file.length >= HeaderSize + FooterSize && file.readUInt32LE(file.length - FooterSize) === FooterMagic

/** The member's completed chunk files covering chunks 0..lastChunk, in order (masked). */
export const completedChunksThrough = (node: string, disk: MemoryDisk, dir: string, lastChunk: number): ChunkImages => {
  const byStart = new Map<number, { version: number; path: string }>()
  for (const path of disk.files()) {
    if (!path.startsWith(`${dir}/`)) continue
    const match = /^chunk-(\d+)\.(\d+)$/.exec(path.slice(dir.length + 1))
    if (match === null) continue
    const start = Number(match[1])
    const version = Number(match[2])
    if ((byStart.get(start)?.version ?? -1) < version) byStart.set(start, { version, path })
  }
  const files: Array<ChunkFileImage> = []
  for (let start = 0; start <= lastChunk;) {
    const found = byStart.get(start)
    if (found === undefined) break
    const bytes = disk.readFileSync(found.path)
    if (!isCompleted(bytes)) break
    const endNumber = bytes.readUInt32LE(14)
    files.push({ name: found.path.slice(dir.length + 1), startNumber: start, endNumber, bytes: masked(bytes) })
    start = endNumber + 1
  }
  return { node, files }
}

/** The first difference between two members' chunk files covering the same chunks through `lastChunk`. */
export const compareChunkImages = (a: ChunkImages, b: ChunkImages, lastChunk: number): string | undefined => {
  const reach = (i: ChunkImages) => i.files[i.files.length - 1]?.endNumber ?? -1
  if (reach(a) < lastChunk || reach(b) < lastChunk) {
    return `completed chunks through ${lastChunk} missing: ${a.node} has them through ${reach(a)}, ${b.node} through ${reach(b)}`
  }
  for (const fa of a.files) {
    const fb = b.files.find((f) => f.startNumber === fa.startNumber && f.endNumber === fa.endNumber)
    if (fb === undefined || fa.endNumber > lastChunk) continue
    if (!fa.bytes.equals(fb.bytes)) {
      const at = firstDifference(fa.bytes, fb.bytes)
      return `chunks ${span(fa)} differ at byte ${at} of ${fa.bytes.length}/${fb.bytes.length}: ${a.node}'s ${fa.name}, ${b.node}'s ${fb.name}`
    }
  }
  return undefined
}

/** Two members hold the same records below `end` (their committed images, scanned from their logs). */
export const compareRecordsBelow = (a: LogImage, b: LogImage, end: number): string | undefined => {
  const below = (i: LogImage) => i.records.filter((r) => r.position < end)
  const ra = below(a)
  const rb = below(b)
  for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
    const x = ra[i]
    const y = rb[i]
    if (x?.position !== y?.position || x?.fingerprint !== y?.fingerprint) {
      const at = Math.min(x?.position ?? Infinity, y?.position ?? Infinity)
      return `records below ${end} differ at ${at}: ${a.node} holds ${x === undefined ? "nothing" : JSON.stringify(x.fingerprint)}, ${b.node} holds ${y === undefined ? "nothing" : JSON.stringify(y.fingerprint)}`
    }
  }
  return undefined
}

const span = (f: ChunkFileImage | undefined): string =>
  f === undefined ? "nothing" : `${f.startNumber}-${f.endNumber} (${f.name})`

const firstDifference = (a: Buffer, b: Buffer): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return i
  return Math.min(a.length, b.length)
}
