/**
 * What the projections of a seed must have written, derived from one scan of `$all`, and the checks of what
 * they did write. Pure: the workload (projectionsWorkload.ts) reads the store and calls these.
 *
 * The rules, written from the system projections' contract rather than from their code:
 *
 * - `$by_category` reads `$all` with links, fed every record of a non-`$` stream and of the metastream of a
 *   non-`$` stream. The category is the part of the stream's name before its first `-` (none at index 0, none
 *   for a `$` stream). A record links into `$ce-{category}`: its own `{n}@{stream}`, or, for a link, the
 *   link's own target text (recategorised by the stream the link lies in). A deletion — a hard delete's
 *   tombstone, or a metastream `$metadata` event whose `$tb` is long.MaxValue — is categorised by the deleted
 *   stream and marked `$deleted`. Every link carries `$o`, the stream the record is categorised by.
 * - `$by_event_type` reads `$all` without links: a record links into `$et-{type}`, a deletion into
 *   `$et-$deleted` (pointing into the deleted stream, marked `$deleted`).
 * - Every link names, in its metadata, the `$all` position of the record that caused it (`$p`, else `$c`):
 *   that is the record it stands for.
 *
 * A link stream must hold exactly one link per record the rule sends to it, in `$all` order: no record
 * twice (a restart that wrote again what a checkpoint did not cover), none missing (every record still in
 * the log was there when the projection read past it, since the projections read only the durable log), in
 * increasing position. A link whose record is no longer in the log is allowed only below the last scavenge
 * point (a scavenge removed it after the projection linked it); anywhere else it links something that was
 * never durable, or was invented.
 */
import {
  DeletedStreamNumber,
  EventTypes,
  LongMaxValueText,
  isMetastream,
  isSoftDeleted,
  isSystemStream,
  originalStreamOf,
  parseMetadata
} from "@vellum/storage"

/** One `$all` record, as the scan saw it. */
export interface ScannedRecord {
  readonly stream: string
  /** DeletedStreamNumber for a tombstone. */
  readonly eventNumber: number
  readonly eventType: string
  readonly data: Uint8Array
  readonly isJson: boolean
  readonly logPosition: number
}

/** One event of a link stream as it lies there (not resolved). */
export interface StoredLink {
  readonly eventType: string
  /** The data as text: `{n}@{stream}` for a link. */
  readonly data: string
  /** The metadata as text. */
  readonly metadata: string
}

/** A link some record must have caused. */
export interface ExpectedLink {
  /** The causing record's `$all` position. */
  readonly position: number
  readonly target: string
  /** The `$o` the link must carry (undefined: not checked). */
  readonly original: string | undefined
  readonly deleted: boolean
  /** The record is itself a link (recategorised). */
  readonly fromLink: boolean
}

export interface LinkCheckContext {
  /** Whether a record lies at this `$all` position in the scan. */
  readonly inLog: (position: number) => boolean
  /** Records below this position may have been scavenged (-1: no scavenge point). */
  readonly scavengedBelow: number
}

export interface LinkCheckReport {
  readonly problems: ReadonlyArray<string>
  /** Links checked against the record they stand for. */
  readonly checked: number
  /** Links whose record a scavenge removed (allowed). */
  readonly scavenged: number
}

const LinkType = EventTypes.LinkTo

const text = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString()

/** The category of a stream name: before the first `-`, if that is not at index 0; none for `$` streams. */
export const categoryOf = (stream: string): string | undefined => {
  if (isSystemStream(stream)) return undefined
  const at = stream.indexOf("-")
  return at > 0 ? stream.slice(0, at) : undefined
}

/** The records a system projection is fed: those of non-`$` streams and of their metastreams. */
export const fedToSystem = (record: ScannedRecord): boolean =>
  !isSystemStream(record.stream) || (isMetastream(record.stream) && !isSystemStream(originalStreamOf(record.stream)))

/** The stream this record deletes, if it is a deletion. */
export const deletedStreamOf = (record: ScannedRecord): string | undefined => {
  if (isMetastream(record.stream)) {
    if (record.eventType !== EventTypes.Metadata) return undefined
    return isSoftDeleted(parseMetadata(record.data, record.isJson)) ? originalStreamOf(record.stream) : undefined
  }
  return record.eventType === EventTypes.StreamDeleted ? record.stream : undefined
}

const numberText = (eventNumber: number) => (eventNumber === DeletedStreamNumber ? LongMaxValueText : `${eventNumber}`)
const pointer = (record: ScannedRecord) => `${numberText(record.eventNumber)}@${record.stream}`

const push = <K, V>(map: Map<K, Array<V>>, key: K, value: V) => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else list.push(value)
}

/** What `$by_category` must have written: per `$ce-…` stream, in `$all` order. */
export const expectedCategoryLinks = (records: ReadonlyArray<ScannedRecord>): Map<string, Array<ExpectedLink>> => {
  const out = new Map<string, Array<ExpectedLink>>()
  for (const record of records) {
    if (!fedToSystem(record)) continue
    const deleted = deletedStreamOf(record)
    const original = deleted ?? record.stream
    const category = categoryOf(original)
    if (category === undefined) continue
    const fromLink = record.eventType === LinkType
    push(out, `$ce-${category}`, {
      position: record.logPosition,
      target: fromLink ? text(record.data) : pointer(record),
      original,
      deleted: deleted !== undefined,
      fromLink
    })
  }
  return out
}

/** What `$by_event_type` must have written: per `$et-…` stream, in `$all` order. */
export const expectedEventTypeLinks = (records: ReadonlyArray<ScannedRecord>): Map<string, Array<ExpectedLink>> => {
  const out = new Map<string, Array<ExpectedLink>>()
  for (const record of records) {
    if (!fedToSystem(record) || record.eventType === LinkType) continue
    const deleted = deletedStreamOf(record)
    const link = { position: record.logPosition, original: undefined, deleted: deleted !== undefined, fromLink: false }
    if (deleted === undefined) push(out, `$et-${record.eventType}`, { ...link, target: pointer(record) })
    else push(out, "$et-$deleted", { ...link, target: `${numberText(record.eventNumber)}@${deleted}` })
  }
  return out
}

/** The causing position a link's metadata names (`$p`, else `$c`), or why it names none. */
export const causingPosition = (metadata: string): number | string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(metadata)
  } catch {
    return `metadata is not JSON: ${metadata.slice(0, 80)}`
  }
  if (typeof parsed !== "object" || parsed === null) return `metadata is not an object: ${metadata.slice(0, 80)}`
  const m = parsed as Record<string, unknown>
  const position = typeof m.$p === "number" ? m.$p : m.$c
  return typeof position === "number" && Number.isSafeInteger(position)
    ? position
    : `metadata names no position: ${metadata.slice(0, 80)}`
}

const metadataMember = (metadata: string, key: string): unknown => {
  try {
    return (JSON.parse(metadata) as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

/** One link stream against what its records must have caused. */
export const checkLinkStream = (
  stream: string,
  expected: ReadonlyArray<ExpectedLink>,
  actual: ReadonlyArray<StoredLink>,
  context: LinkCheckContext
): LinkCheckReport => {
  const problems: Array<string> = []
  const byPosition = new Map(expected.map((e) => [e.position, e]))
  const seen = new Map<number, number>()
  let previous = -1
  let checked = 0
  let scavenged = 0
  actual.forEach((link, index) => {
    const at = `${stream}#${index}`
    if (link.eventType !== LinkType) return void problems.push(`${at} is a ${link.eventType}, not a link`)
    const position = causingPosition(link.metadata)
    if (typeof position === "string") return void problems.push(`${at}: ${position}`)
    const first = seen.get(position)
    if (first !== undefined)
      return void problems.push(`${at} links the record at ${position} again (first ${stream}#${first}): a duplicate`)
    seen.set(position, index)
    if (position < previous)
      problems.push(`${at} links the record at ${position} after the one at ${previous}: not in $all order`)
    previous = Math.max(previous, position)
    const want = byPosition.get(position)
    if (want === undefined) {
      if (context.inLog(position)) problems.push(`${at} links the record at ${position}, which does not belong here`)
      else if (position >= context.scavengedBelow)
        problems.push(`${at} links a record at ${position} that is not in the log (and no scavenge reached there)`)
      else scavenged++
      return
    }
    checked++
    if (link.data !== want.target)
      problems.push(`${at} points at ${link.data}, the record at ${position} is ${want.target}`)
    if (want.original !== undefined && metadataMember(link.metadata, "$o") !== want.original)
      problems.push(`${at} has $o ${JSON.stringify(metadataMember(link.metadata, "$o"))}, expected ${want.original}`)
    if ((metadataMember(link.metadata, "$deleted") === -1) !== want.deleted)
      problems.push(`${at} ${want.deleted ? "lacks" : "has"} $deleted (record at ${position})`)
  })
  for (const want of expected)
    if (!seen.has(want.position))
      problems.push(`${stream} lacks a link for the record at ${want.position} (${want.target})`)
  return { problems, checked, scavenged }
}

/**
 * Every link stream of one rule: those the records call for and those the store holds (`actual` has an
 * entry for each stream the scan showed with the rule's prefix, and for each expected stream).
 */
export const checkLinkStreams = (
  expected: ReadonlyMap<string, ReadonlyArray<ExpectedLink>>,
  actual: ReadonlyMap<string, ReadonlyArray<StoredLink>>,
  context: LinkCheckContext
): LinkCheckReport => {
  const streams = [...new Set([...expected.keys(), ...actual.keys()])].sort()
  const reports = streams.map((s) => checkLinkStream(s, expected.get(s) ?? [], actual.get(s) ?? [], context))
  return {
    problems: reports.flatMap((r) => r.problems),
    checked: reports.reduce((n, r) => n + r.checked, 0),
    scavenged: reports.reduce((n, r) => n + r.scavenged, 0)
  }
}
