/**
 * The competing-consumer feed: the messages one group read handed out, as an Atom feed in JSON or XML,
 * rendered by the stream feeds' renderer. Entries are newest (last handed out) first, each with `ack` and
 * `nack` links after `edit`/`alternate` and its `retryCount`; the feed links are `ackAll`/`nackAll` (only
 * with messages), `previous` (the same count again) and `self`. Ids in the ack links are the original
 * events' ids (a link's own id when the group resolves links), written raw.
 */
import {
  NoEventsDate,
  escapeDataString,
  feedSyntaxFor,
  renderFeed,
  updatedOf,
  type EmbedLevel,
  type EntryExtras,
  type FeedHead,
  type FeedLink
} from "@vellum/http"
import type { SubscribedMessage } from "../service/Subscriptions.js"

export interface CompetingFeedContext {
  readonly baseUrl: string
  readonly stream: string
  readonly group: string
  /** The count asked for (the `previous` link repeats it). */
  readonly count: number
  readonly embed: EmbedLevel
  /** In the order they were handed out (oldest first). */
  readonly messages: ReadonlyArray<SubscribedMessage>
}

/** `<base>/subscriptions/<s>/<g>`, both escaped. */
export const groupUrl = (baseUrl: string, stream: string, group: string): string =>
  `${baseUrl}/subscriptions/${escapeDataString(stream)}/${escapeDataString(group)}`

export const renderCompetingFeed = (ctx: CompetingFeedContext, responseType: string): string => {
  const self = groupUrl(ctx.baseUrl, ctx.stream, ctx.group)
  const { messages } = ctx
  const ids = messages.map((m) => m.event.id).join(",")
  const links: Array<FeedLink> =
    messages.length === 0
      ? []
      : [
          { relation: "ackAll", uri: `${self}/ack?ids=${ids}` },
          { relation: "nackAll", uri: `${self}/nack?ids=${ids}` }
        ]
  links.push({ relation: "previous", uri: `${self}/${ctx.count}` }, { relation: "self", uri: self })
  const newest = messages[messages.length - 1]?.event.resolved
  const head: FeedHead = {
    title: `Messages for '${ctx.stream}/${ctx.group}'`,
    id: self,
    // The time of the last message handed out.
    updated: newest === undefined ? NoEventsDate : updatedOf(newest),
    streamId: "null",
    headOfStream: false,
    selfUrl: "null",
    eTag: "null"
  }
  const extras: Array<EntryExtras> = messages.map((m) => ({
    retryCount: m.retryCount,
    links: [
      { relation: "ack", uri: `${self}/ack/${m.event.id}` },
      { relation: "nack", uri: `${self}/nack/${m.event.id}` }
    ]
  }))
  return renderFeed(
    feedSyntaxFor(responseType) ?? "json",
    head,
    links,
    messages.map((m) => m.event.resolved),
    false,
    ctx.baseUrl,
    ctx.embed,
    extras
  )
}
