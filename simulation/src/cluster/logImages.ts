/**
 * The cluster's safety rules over what the nodes' logs hold, as pure functions of snapshots (the runner reads
 * the snapshots from each node's store; the unit tests build them by hand, so each rule is shown to fail).
 *
 * A snapshot of one node (`LogImage`) is the records of its log below its committed position, each as a
 * fingerprint at its position, plus the newest epochs of its whole log (the uncommitted tail's included).
 *
 * - Committed prefixes agree: any two nodes hold identical records up to the lower of their committed
 *   positions. The runner keeps one `CommittedLog`, the longest committed prefix seen so far, and holds every
 *   snapshot to it: a committed record never changes and never goes away, on any node, in any incarnation.
 * - At most one leader per epoch: an epoch number is written by one leader once, so wherever two nodes hold
 *   an epoch record with the same number it is the same record (same position, id and leader).
 * - Epochs strictly increase along a log: newer epoch records have greater numbers and positions.
 * - Per node, a committed epoch never leaves its log (`EpochWatch`): a node may cut an uncommitted epoch
 *   from its tail, never a committed one.
 */
import { RecordKind, type LogRecord } from "@vellum/storage"

/** One record as compared between nodes: its position and what it says. */
export interface ImageRecord {
  readonly position: number
  readonly fingerprint: string
}

/** One epoch record: its number, where it lies, and which leader wrote it. */
export interface ImageEpoch {
  readonly epochNumber: number
  readonly position: number
  readonly epochId: string
  readonly leaderInstanceId?: string
}

export interface LogImage {
  readonly node: string
  /** The end of what the node serves (everything below it is committed). */
  readonly committed: number
  /** The records below `committed`, in position order. */
  readonly records: ReadonlyArray<ImageRecord>
  /** Epochs of the whole log, newest first (the uncommitted tail's included). */
  readonly epochs: ReadonlyArray<ImageEpoch>
}

/** A short, stable digest of bytes (FNV-1a 32), enough to tell two payloads apart in a fingerprint. */
const digest = (bytes: Uint8Array): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193) >>> 0
  return h.toString(16)
}

/** What a record says, as a string two nodes' copies must share. */
export const fingerprintOf = (record: LogRecord): string => {
  switch (record.kind) {
    case RecordKind.Event:
      return `event ${record.stream}#${record.eventNumber} ${record.eventId} ${record.eventType} ${record.flags} ${record.createdMicros} ${digest(record.data)} ${digest(record.metadata)}`
    case RecordKind.Epoch:
      return `epoch ${record.epochNumber} ${record.epochId} ${record.leaderInstanceId} prev=${record.prevEpochPosition}`
    case RecordKind.Commit:
      return `commit ${record.transactionPosition} ${record.firstEventNumber} ${record.correlationId}`
    case RecordKind.ScavengePoint:
      return `scavengePoint ${record.number} ${record.eventId}`
  }
}

/**
 * The longest committed prefix any node has shown, which every later snapshot must agree with.
 *
 * Scavenging removes records from a node's chunks, but only below a scavenge point. So below the newest
 * scavenge point any node's log has shown (the horizon), a record one side holds and the other does not
 * is taken as scavenged; records both hold at one position must still be the same record, and from the
 * horizon on nothing may be missing. (What may be removed is not judged here: the client streams, which
 * nothing makes discardable, are held to the acknowledged history exactly by the ledger.)
 */
export class CommittedLog {
  private records: Array<ImageRecord> = []
  /** The committed position the prefix reaches. */
  end = 0
  /** The position of the newest scavenge point seen: below it records may have been scavenged. */
  horizon = 0
  /** Which node showed the prefix up to `end` first. */
  private source = ""

  /** Holds a node's snapshot to the prefix (then extends the prefix with it); the problem, if any. */
  check(image: LogImage): string | undefined {
    for (const r of image.records) if (isScavengePoint(r) && r.position > this.horizon) this.horizon = r.position
    const bound = Math.min(this.end, image.committed)
    const mine = this.records.filter((r) => r.position < bound)
    const theirs = image.records.filter((r) => r.position < bound)
    const union: Array<ImageRecord> = []
    for (let i = 0, j = 0; i < mine.length || j < theirs.length;) {
      const a = mine[i]
      const b = theirs[j]
      if (a !== undefined && b !== undefined && a.position === b.position) {
        if (a.fingerprint !== b.fingerprint) return this.disagree(bound, a.position, a, b, image)
        union.push(a)
        i++
        j++
        continue
      }
      const at = Math.min(a?.position ?? Infinity, b?.position ?? Infinity)
      const held = a !== undefined && a.position === at ? a : b!
      if (at >= this.horizon)
        return this.disagree(bound, at, held === a ? a : undefined, held === b ? b : undefined, image)
      union.push(held)
      if (held === a) i++
      else j++
    }
    if (image.committed > this.end) {
      this.records = [...union, ...image.records.filter((r) => r.position >= bound && r.position < image.committed)]
      this.end = image.committed
      this.source = image.node
    }
    return undefined
  }

  private disagree(
    bound: number,
    at: number,
    a: ImageRecord | undefined,
    b: ImageRecord | undefined,
    image: LogImage
  ): string {
    return `committed prefixes disagree below ${bound}: at ${at} ${this.source} held ${describe(a)}, ${image.node} holds ${describe(b)}`
  }
}

const isScavengePoint = (r: ImageRecord): boolean => r.fingerprint.startsWith("scavengePoint ")

const describe = (r: ImageRecord | undefined): string =>
  r === undefined ? "nothing" : `${JSON.stringify(r.fingerprint)} at ${r.position}`

/** Epochs along one log: numbers and positions strictly decrease from the newest. */
export const checkEpochChain = (image: LogImage): string | undefined => {
  for (let i = 1; i < image.epochs.length; i++) {
    const newer = image.epochs[i - 1]!
    const older = image.epochs[i]!
    if (newer.epochNumber <= older.epochNumber || newer.position <= older.position) {
      return `${image.node}'s epochs do not increase: epoch ${older.epochNumber} at ${older.position} is followed by epoch ${newer.epochNumber} at ${newer.position}`
    }
  }
  return undefined
}

/** Every epoch record ever seen, by number: two different ones with one number are two leaders in one epoch. */
export class EpochRegistry {
  private readonly byNumber = new Map<number, { readonly epoch: ImageEpoch; readonly node: string }>()

  check(image: LogImage): string | undefined {
    for (const epoch of image.epochs) {
      const seen = this.byNumber.get(epoch.epochNumber)
      if (seen === undefined) {
        this.byNumber.set(epoch.epochNumber, { epoch, node: image.node })
        continue
      }
      const a = seen.epoch
      const leaderDiffers =
        a.leaderInstanceId !== undefined &&
        epoch.leaderInstanceId !== undefined &&
        a.leaderInstanceId !== epoch.leaderInstanceId
      if (a.epochId !== epoch.epochId || a.position !== epoch.position || leaderDiffers) {
        return `two leaders in epoch ${epoch.epochNumber}: ${seen.node} holds ${a.epochId} at ${a.position} (leader ${a.leaderInstanceId ?? "?"}), ${image.node} holds ${epoch.epochId} at ${epoch.position} (leader ${epoch.leaderInstanceId ?? "?"})`
      }
    }
    return undefined
  }

  get size(): number {
    return this.byNumber.size
  }
}

/** How many of a log's newest epochs a snapshot holds (`ReplicaLog.epochs(max)`). */
export const EpochsPerImage = 64

/**
 * Per node: an epoch once committed stays in its log (an uncommitted one may be cut), and within one lifetime
 * the committed position never goes back (after a restart it is reloaded lazily, so it may start lower).
 */
export class EpochWatch {
  private readonly committedEpoch = new Map<string, ImageEpoch>()
  private readonly committedAt = new Map<string, number>()

  /** `incarnation` names one run of the node. */
  check(image: LogImage, incarnation: string): string | undefined {
    const known = this.committedEpoch.get(image.node)
    const oldestHeld = image.epochs[image.epochs.length - 1]
    const mayBeOlderThanHeld =
      image.epochs.length >= EpochsPerImage && oldestHeld!.epochNumber > (known?.epochNumber ?? 0)
    if (
      known !== undefined &&
      !mayBeOlderThanHeld &&
      !image.epochs.some((e) => e.epochNumber === known.epochNumber && e.position === known.position)
    ) {
      return `${image.node} lost its committed epoch ${known.epochNumber} at ${known.position} (its newest epochs: ${image.epochs.map((e) => `${e.epochNumber}@${e.position}`).join(", ") || "none"})`
    }
    const newest = image.epochs.find((e) => e.position < image.committed)
    if (newest !== undefined && (known === undefined || newest.epochNumber > known.epochNumber)) {
      this.committedEpoch.set(image.node, newest)
    }
    const key = `${image.node}#${incarnation}`
    const before = this.committedAt.get(key)
    if (before !== undefined && image.committed < before) {
      return `${image.node}'s committed position went back from ${before} to ${image.committed} without a restart`
    }
    this.committedAt.set(key, image.committed)
    return undefined
  }
}
