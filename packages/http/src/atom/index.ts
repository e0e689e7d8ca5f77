/**
 * Atom rendering: feeds, entries, single events and the description document of the stream routes, as
 * pure string-building functions (a hot path: one call per request, plain loops inside), plus the URL,
 * date, `$all` position and caching helpers they rest on.
 */
export { escapeDataString } from "./escape.js"
export { formatAtomDate, NoEventsDate } from "./dates.js"
export { StartPosition, formatAllPosition, parseAllPosition, type AllPosition } from "./position.js"
export { parseEmbed, EmbedRank, type EmbedLevel } from "./embed.js"
export {
  renderStreamFeed,
  renderAllFeed,
  streamFeedBytes,
  allFeedBytes,
  renderFeed,
  updatedOf,
  feedSyntaxFor,
  streamFeedLinks,
  allFeedLinks,
  type FeedLink,
  type FeedSyntax,
  type FeedHead,
  type StreamFeedPage,
  type StreamFeedContext,
  type AllFeedPage,
  type AllFeedContext
} from "./feed.js"
export type { EntryExtras } from "./entry.js"
export { renderSingleEvent, notFoundBody, type SingleEventContext } from "./single.js"
export { renderDescriptionDocument, DescriptionDocumentReason } from "./description.js"
export {
  ImmutableMaxAge,
  ImmutableCacheControl,
  NoCacheControl,
  contentTypeHash,
  positionETag,
  ifNoneMatchPosition,
  streamFeedCache,
  allFeedCache,
  singleEventCache,
  cacheHeaders,
  type CacheDecision,
  type CacheHeaderOptions
} from "./cache.js"
