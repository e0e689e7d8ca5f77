/**
 * What a read that resolves links must show, and what an Atom JSON reply does show, for the ACL actor's
 * streams (which hold links, `$>` events whose data is `<n>@<stream>`).
 *
 * A stream read over HTTP resolves links unless told not to. A link whose target the reader may read (the
 * reader's own read permission on the target stream, by the same rules as a direct read: see
 * `authorization.ts`) and whose target event a direct read would return shows that event: its id, its
 * stream and number. Any other link shows alone: the feed entry names the target (`<n>@<stream>`) and
 * carries no event fields, and a single-event read of it answers 404. A denied target is shown exactly as
 * a missing one, so a reader learns nothing of a stream it may not read. (Vellum checks the target's ACL
 * where the reference does not: docs/decisions.md, "Links and ACLs".)
 *
 * Once a scavenge may have run, an event the model calls discardable may be gone: from a page, and as a
 * link's target (the link then shows alone).
 */
import type { ModelEvent, StoreModel } from "../model.js"

export const LinkEventType = "$>"

/** What one entry shows: an event (`eventId` set) or a link alone (only its title). */
export interface ShownEntry {
  readonly title: string
  readonly eventId: string | undefined
  readonly stream: string | undefined
  readonly eventNumber: number | undefined
  /** The record read (the link, for a resolved link), when the entry has event fields. */
  readonly position?: { readonly stream: string; readonly number: number }
}

/** Where a link event points, from its data. */
export const linkTargetOf = (event: ModelEvent): { stream: string; number: number } | undefined => {
  if (event.eventType !== LinkEventType) return undefined
  const text = Buffer.from(event.data).toString("utf8")
  const at = text.indexOf("@")
  return { stream: text.slice(at + 1), number: Number(text.slice(0, at)) }
}

/**
 * The entry the model expects for `event`, for a reader who may read the streams `mayRead` says; `optional`
 * when a scavenge may have removed the event, `orAlone` when it may have removed a link's target.
 */
export interface ExpectedEntry {
  readonly entry: ShownEntry
  readonly link: "none" | "resolved" | "alone" | "denied"
  readonly optional: boolean
  readonly orAlone: ShownEntry | undefined
}

export const expectedEntry = (
  model: StoreModel,
  event: ModelEvent,
  mayRead: (stream: string) => boolean
): ExpectedEntry => {
  const optional = model.isDiscardable(event)
  const target = linkTargetOf(event)
  if (target === undefined) {
    const entry = {
      title: `${event.eventNumber}@${event.stream}`,
      eventId: event.eventId,
      stream: event.stream,
      eventNumber: event.eventNumber
    }
    return { entry, link: "none", optional, orAlone: undefined }
  }
  const title = `${target.number}@${target.stream}`
  const alone = { title, eventId: undefined, stream: undefined, eventNumber: undefined }
  if (!mayRead(target.stream)) return { entry: alone, link: "denied", optional, orAlone: undefined }
  const read = model.readEvent(target.stream, target.number)
  if (read._tag !== "Success") return { entry: alone, link: "alone", optional, orAlone: undefined }
  return {
    entry: { title, eventId: read.event.eventId, stream: target.stream, eventNumber: target.number },
    link: "resolved",
    optional,
    orAlone: model.isDiscardable(read.event) ? alone : undefined
  }
}

const entryOf = (value: unknown): ShownEntry | string => {
  if (value === null || typeof value !== "object") return `an entry is not an object: ${JSON.stringify(value)}`
  const o = value as Record<string, unknown>
  if (typeof o.title !== "string") return `an entry has no title: ${JSON.stringify(value).slice(0, 200)}`
  return {
    title: o.title,
    eventId: typeof o.eventId === "string" ? o.eventId : undefined,
    stream: typeof o.streamId === "string" ? o.streamId : undefined,
    eventNumber: typeof o.eventNumber === "number" ? o.eventNumber : undefined,
    ...(typeof o.positionStreamId === "string" && typeof o.positionEventNumber === "number"
      ? { position: { stream: o.positionStreamId, number: o.positionEventNumber } }
      : {})
  }
}

/** The entries of an Atom JSON feed (newest first) or of a single-event document; a string says what is wrong. */
export const parseShown = (text: string, feed: boolean): ReadonlyArray<ShownEntry> | string => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return `not JSON: ${text.slice(0, 200)}`
  }
  if (!feed) {
    const entry = entryOf(json)
    return typeof entry === "string" ? entry : [entry]
  }
  const entries = (json as { entries?: unknown }).entries
  if (!Array.isArray(entries)) return `not a feed: ${text.slice(0, 200)}`
  const out: Array<ShownEntry> = []
  for (const item of entries) {
    const entry = entryOf(item)
    if (typeof entry === "string") return entry
    out.push(entry)
  }
  return out
}

const same = (a: ShownEntry, b: ShownEntry | undefined): boolean =>
  b !== undefined &&
  a.title === b.title &&
  a.eventId === b.eventId &&
  a.stream === b.stream &&
  a.eventNumber === b.eventNumber

/** The first difference between shown and expected entries, if any (an optional entry may be missing). */
export const compareShown = (shown: ReadonlyArray<ShownEntry>, expected: ReadonlyArray<ExpectedEntry>) => {
  const describe = () =>
    `shows ${shown.map((e) => JSON.stringify(e)).join(" ")}; the model ${expected.map((e) => `${e.entry.title}${e.optional ? "?" : ""}`).join(" ")}`
  let i = 0
  for (const e of expected) {
    const a = shown[i]
    if (a !== undefined && (same(a, e.entry) || same(a, e.orAlone))) i++
    else if (!e.optional) return `entry ${i} differs: ${describe()}`
  }
  return i === shown.length ? undefined : `more entries than the model: ${describe()}`
}
