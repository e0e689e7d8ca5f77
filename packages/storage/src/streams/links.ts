/**
 * Link resolution: a `$>` event whose data is `<number>@<stream>` stands for that event of that stream.
 *
 * Every resolution asks the reader's `LinkAccess` first, so a link never shows a target its reader may not
 * read: a denied target comes back exactly as a link whose target does not exist (the link alone). The
 * question is asked once per target stream per read (a page of a thousand links into one stream costs one
 * decision), and never for a page without links.
 */
import { Effect } from "effect"
import type { ReadError } from "../log/TransactionLog.js"
import type { EventRecord } from "../log/records.js"
import { EventTypes } from "./names.js"
import type { EventReadResult } from "./ReadIndex.js"

/** A read event, with the link it was reached through when links are resolved (ESDB's ResolvedEvent). */
export interface ResolvedEvent {
  /** The event (the link's target when resolved; undefined when a link could not be resolved). */
  readonly event: EventRecord | undefined
  /** The link event, when `event` was reached through one. */
  readonly link: EventRecord | undefined
}

/**
 * Who is reading, as far as links go: may the reader see events of `stream`? Every reader that resolves
 * links passes one (the HTTP reads, and later persistent subscriptions and projections), built from the
 * same stream ACL check a direct read of the target would apply.
 */
export interface LinkAccess {
  readonly mayRead: (stream: string) => Effect.Effect<boolean>
}

/** For the node's own readers acting as the system (which may read every stream), never for a client. */
export const SystemLinkAccess: LinkAccess = { mayRead: () => Effect.succeed(true) }

/** Where a link points; `undefined` when its data is not a link at all (the event stays a plain event). */
export type LinkTarget = { readonly stream: string; readonly number: number } | "unreadable" | undefined

/**
 * Parses a link's data as the reference's ResolveLinkToEvent does: the text before the first '@' must parse
 * as C#'s long.TryParse does (optional whitespace and sign, digits only), else it is no link. A parsed link
 * that cannot name an event here (no '@', an empty stream name, a number below -1 or past 2^53) is
 * "unreadable": it resolves to nothing. -1 names the target's last event, as a single-event read does.
 */
export const parseLinkTarget = (data: Buffer): LinkTarget => {
  const text = data.toString("utf8")
  const at = text.indexOf("@")
  const numberText = at < 0 ? text : text.slice(0, at)
  if (!/^[\t\n\v\f\r ]*[+-]?[0-9]+[\t\n\v\f\r ]*$/.test(numberText)) return undefined
  const number = BigInt(numberText.trim())
  if (number > 9223372036854775807n || number < -9223372036854775808n) return undefined
  const stream = at < 0 ? "" : text.slice(at + 1)
  if (stream.length === 0 || number < -1n || number > BigInt(Number.MAX_SAFE_INTEGER) - 1n) return "unreadable"
  return { stream, number: Number(number) }
}

type ReadTarget = (stream: string, number: number, nowMicros: number) => Effect.Effect<EventReadResult, ReadError>

export interface LinkResolver {
  /** One event, resolved for `access` (or passed through when it is no link). */
  readonly resolveOne: (
    event: EventRecord,
    access: LinkAccess,
    nowMicros: number
  ) => Effect.Effect<ResolvedEvent, ReadError>
  /** A page: only link events cost an Effect; each target stream's access is decided once for the page. */
  readonly resolvePage: (
    events: ReadonlyArray<EventRecord>,
    access: LinkAccess | undefined,
    nowMicros: number
  ) => Effect.Effect<Array<ResolvedEvent>, ReadError>
}

export const makeLinkResolver = (readTarget: ReadTarget): LinkResolver => {
  const resolve = (
    event: EventRecord,
    access: LinkAccess,
    decided: Map<string, boolean>,
    nowMicros: number
  ): Effect.Effect<ResolvedEvent, ReadError> => {
    if (event.eventType !== EventTypes.LinkTo) return Effect.succeed({ event, link: undefined })
    const target = parseLinkTarget(event.data)
    if (target === undefined) return Effect.succeed({ event, link: undefined })
    if (target === "unreadable") return Effect.succeed({ event: undefined, link: event })
    const read = Effect.map(readTarget(target.stream, target.number, nowMicros), (r): ResolvedEvent => ({
      event: r._tag === "Success" ? r.event : undefined,
      link: event
    }))
    const denied: ResolvedEvent = { event: undefined, link: event }
    const known = decided.get(target.stream)
    if (known !== undefined) return known ? read : Effect.succeed(denied)
    return Effect.flatMap(access.mayRead(target.stream), (allowed) => {
      decided.set(target.stream, allowed)
      return allowed ? read : Effect.succeed(denied)
    })
  }

  return {
    resolveOne: (event, access, nowMicros) => resolve(event, access, new Map(), nowMicros),
    resolvePage: (events, access, nowMicros) => {
      const resolved = events.map((event): ResolvedEvent => ({ event, link: undefined }))
      if (access === undefined) return Effect.succeed(resolved)
      const links: Array<number> = []
      for (let i = 0; i < events.length; i++) if (events[i]!.eventType === EventTypes.LinkTo) links.push(i)
      if (links.length === 0) return Effect.succeed(resolved)
      const decided = new Map<string, boolean>()
      return Effect.as(
        Effect.forEach(
          links,
          (i) =>
            Effect.map(resolve(events[i]!, access, decided, nowMicros), (r) => {
              resolved[i] = r
            }),
          { discard: true }
        ),
        resolved
      )
    }
  }
}
