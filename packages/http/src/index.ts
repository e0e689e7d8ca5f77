// @vellum/http: the AtomPub HTTP API — routes, content negotiation, JSON/XML codecs, auth, errors.
export * from "./Reply.js"
export * from "./Route.js"
// The pipeline and the stream API (pipeline.ts, streams/).
export * from "./HttpConfig.js"
export * from "./HttpRequest.js"
export { makeHandler, type RequestHandler } from "./pipeline.js"
export { streamRoutes, type StreamRouteRequirements } from "./streams/routes.js"
export { serveHttp, type ServeOptions } from "./live/serveHttp.js"
export { loggedPath, withClientAddress, withRequestLog } from "./requestLog.js"
export { badRequest, documentReply, emptyReply, statusReply, unauthorizedBare, TextPlainUtf8 } from "./replies.js"
export { storageErrorReply, wireEventNumber, wrongExpectedVersionReply } from "./storageErrors.js"
export { parseLenientJson, tryParseLenientJson, stringifyIndented, quoteJson, memberIgnoreCase, JsonSyntaxError, type JsonValue } from "./lenientJson.js"
export { selectResponseType, selectRequestType, parseMediaType, parseAccept, type MediaRange, type ResponseChoice } from "./mediaType.js"
export { buildBaseUrl, rawRequestUrl } from "./baseUrl.js"
// The node endpoints and their services; the users API.
export * from "./node/index.js"
export * from "./users/index.js"
export * from "./admin/index.js"
