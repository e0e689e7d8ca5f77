/**
 * Rendered entries kept with the immutable records they show, so a hot event is rendered once per form
 * rather than once per page that shows it.
 *
 * An entry depends on its record (the link and the event it resolved to), the form (JSON or XML, embed
 * level, single-event document or feed entry) and, in its three URLs, the request's base URL. The entry is
 * rendered once per form with a mark in place of the base and kept as UTF-8 with the base last asked for
 * (KeptEntry); a page copies it into its buffer whole, or rebased when its base differs (utf8Out.ts). That gives the same bytes only while escaping the base is the identity and escaping the
 * URL's rest does not depend on what precedes it, so a base with any character JSON or XML escapes (or a
 * non-ASCII one) is rendered whole, every time, as is an entry whose text contains the mark itself or a
 * lone surrogate (which its UTF-8 bytes cannot give back).
 *
 * The parts live in a WeakMap on the record object: the store hands out the same object for a record it
 * keeps decoded (storage's RecordCache), and the parts go when the record does, so their memory is bounded
 * by the store's cache. A record's bytes at a log position never change, so neither do its parts.
 */
import type { EventRecord, ResolvedEvent } from "@vellum/storage"
import { EmbedRank, type EmbedLevel } from "./embed.js"
import type { Utf8Out } from "./utf8Out.js"

/** Stands for the base URL while an entry is rendered for the cache (private use: nothing escapes it). */
export const BASE_MARK = "\uE000"

/** Every entry form names its URL three times: id (JSON) or id element (XML), and the edit/alternate links. */
const URL_COUNT = 3

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * An entry's UTF-8 bytes for the base URL it was last written with, and where that base sits in them: the
 * same base copies the entry whole; another one copies the parts around the kept base with it between them,
 * and is kept instead (the last base wins).
 */
class KeptEntry {
  constructor(
    private bytes: Buffer,
    private base: string,
    private baseBytes: number,
    /** Byte offsets where the base starts, in order. */
    private readonly at: Array<number>
  ) {}

  static of(parts: ReadonlyArray<string>, base: string): KeptEntry {
    const kept = new KeptEntry(Buffer.from(parts[0]!, "utf8"), "", 0, [])
    kept.rebase(
      parts.map((part) => Buffer.from(part, "utf8")),
      base
    )
    return kept
  }

  write(out: Utf8Out, base: string): void {
    if (base !== this.base) this.rebase(this.parts(), base)
    out.bytes(this.bytes)
  }

  /** The bytes around the kept base. */
  private parts(): Array<Buffer> {
    const parts: Array<Buffer> = []
    let from = 0
    for (const at of this.at) {
      parts.push(this.bytes.subarray(from, at))
      from = at + this.baseBytes
    }
    parts.push(this.bytes.subarray(from))
    return parts
  }

  private rebase(parts: ReadonlyArray<Buffer>, base: string): void {
    const baseBytes = Buffer.from(base, "utf8")
    const pieces: Array<Buffer> = [parts[0]!]
    let at = parts[0]!.length
    for (let i = 1; i < parts.length; i++) {
      this.at[i - 1] = at
      pieces.push(baseBytes, parts[i]!)
      at += baseBytes.length + parts[i]!.length
    }
    this.bytes = Buffer.concat(pieces, at)
    this.base = base
    this.baseBytes = baseBytes.length
  }
}

/** A form whose entry is rendered whole every time. */
const NOT_CACHEABLE = "not cacheable"

interface Slot {
  /** The event the link resolved to (or the record itself) when the parts were rendered. */
  readonly event: EventRecord | undefined
  readonly forms: Array<KeptEntry | typeof NOT_CACHEABLE | undefined>
}

const slots = new WeakMap<EventRecord, Slot>()

/** Printable ASCII that neither JSON strings nor XML text and attributes escape. */
export const isPlainBase = (baseUrl: string): boolean => {
  for (let i = 0; i < baseUrl.length; i++) {
    const c = baseUrl.charCodeAt(i)
    if (c < 0x20 || c > 0x7e || c === 34 /* " */ || c === 92 /* \ */ || c === 38 /* & */ || c === 60 || c === 62)
      return false
  }
  return true
}

/** The last base found plain: a page asks for each of its entries, with the same string. */
let lastPlainBase: string | undefined

const isPlainBaseOnce = (baseUrl: string): boolean => {
  if (baseUrl === lastPlainBase) return true
  if (!isPlainBase(baseUrl)) return false
  lastPlainBase = baseUrl
  return true
}

/** The form's slot: JSON or XML, embed level, single-event document or feed entry. */
export const formIndex = (xml: boolean, embed: EmbedLevel, single: boolean): number =>
  (xml ? 12 : 0) + EmbedRank[embed] * 2 + (single ? 1 : 0)

/**
 * Writes the entry `render(base)` gives for `baseUrl`, from the parts kept for this record and form when the
 * base allows it.
 */
export const writeCachedEntry = (
  out: Utf8Out,
  resolved: ResolvedEvent,
  baseUrl: string,
  form: number,
  render: (base: string) => string
): void => {
  const record = resolved.link ?? resolved.event
  if (record === undefined || !isPlainBaseOnce(baseUrl)) return out.text(render(baseUrl))
  let slot = slots.get(record)
  if (slot === undefined || slot.event !== resolved.event) {
    slot = { event: resolved.event, forms: [] }
    slots.set(record, slot)
  }
  let kept = slot.forms[form]
  if (kept === undefined) {
    const text = render(BASE_MARK)
    const split = text.split(BASE_MARK)
    // Encoding turns a lone surrogate into U+FFFD: the bytes would be right, the text form (HTML) not.
    kept = split.length === URL_COUNT + 1 && !LONE_SURROGATE.test(text) ? KeptEntry.of(split, baseUrl) : NOT_CACHEABLE
    slot.forms[form] = kept
  }
  if (kept === NOT_CACHEABLE) return out.text(render(baseUrl))
  kept.write(out, baseUrl)
}
