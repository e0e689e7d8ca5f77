// @vellum/http: the AtomPub HTTP API — routes, content negotiation, JSON/XML codecs, auth, errors.
export * from "./Reply.js"
export * from "./Route.js"
// The pipeline and the stream API (pipeline.ts, streams/).
export * from "./HttpConfig.js"
export * from "./HttpRequest.js"
export { makeHandler, type RequestHandler } from "./pipeline.js"
export {
  leaderLocation,
  leaderRoutingReply,
  needsLeader,
  saysRequireLeader,
  singleNodeRole,
  type NodeRole,
  type RoutedRequest
} from "./leaderRouting.js"
export { leaderForwardingOf, type LeaderForwarding } from "./forwarding/forwardToLeader.js"
export { serveForwardedRequests } from "./forwarding/serveForwarded.js"
export * as ForwardedMessages from "./forwarding/messages.js"
export { scavengeHistoryRoutes, streamRoutes } from "./streams/routes.js"
export type { StreamRouteRequirements } from "./streams/requirements.js"
export { defaultServeLimits, serveHttp, type ServeOptions } from "./live/serveHttp.js"
export { makeOffThreadParser, OFF_THREAD_MIN_BODY_BYTES } from "./live/offThreadParser.js"
export { ListenFailed } from "./ListenFailed.js"
export { loggedPath, withClientAddress, withRequestLog } from "./requestLog.js"
export {
  badRequest,
  documentReply,
  emptyReply,
  serverErrorProblem,
  statusReply,
  unauthorizedBare,
  TextPlainUtf8
} from "./replies.js"
export { storageErrorReply, wireEventNumber, wrongExpectedVersionReply } from "./storageErrors.js"
export {
  parseLenientJson,
  tryParseLenientJson,
  stringifyIndented,
  quoteJson,
  memberIgnoreCase,
  JsonSyntaxError,
  type JsonValue
} from "./lenientJson.js"
export {
  selectResponseType,
  selectRequestType,
  parseMediaType,
  parseAccept,
  type MediaRange,
  type ResponseChoice
} from "./mediaType.js"
export { buildBaseUrl, rawRequestUrl } from "./baseUrl.js"
export { makeRouter, type Router, type RouteMatch } from "./router.js"
export { parseTarget, type RequestTarget, type InvalidTarget } from "./requestTarget.js"
export { notBuiltRoutes, notBuiltReply, type NotBuiltRoute } from "./notBuilt.js"
// The node endpoints and their services; the users API.
export * from "./endpoints/index.js"
export * from "./users/index.js"
export * from "./admin/index.js"
// What the persistent subscriptions' routes share with the stream API: Atom feeds, the stream ACL gate, the
// control headers and the stream feed reads (their parked-message views).
export {
  escapeDataString,
  formatAtomDate,
  NoEventsDate,
  parseEmbed,
  feedSyntaxFor,
  renderFeed,
  updatedOf,
  type EmbedLevel,
  type EntryExtras,
  type FeedHead,
  type FeedLink,
  type FeedSyntax
} from "./atom/index.js"
export { denyUnlessAllowed } from "./streams/access.js"
export { longPoll, parseGuid, type Parsed } from "./streams/controlHeaders.js"
export { parseAllFilter } from "./streams/allFilter.js"
export { readStreamBackward, readStreamForward } from "./streams/readFeed.js"
export { XML_DECLARATION, escapeXmlText, encodeXmlName } from "./xmlText.js"
