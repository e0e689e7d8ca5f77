/**
 * What every reply leaving the pipeline gets: the legacy CORS headers (unless the
 * reply is bare), the BasicCustom challenge pair on a handler's 401, a reason phrase safe for HTTP/1.1,
 * the gzip/deflate echo, and Content-Length.
 */
import { deflateSync, gzipSync } from "node:zlib"
import type { Reply } from "./Reply.js"

const AllowHeaders = [
  "Content-Type",
  "X-Requested-With",
  "X-Forwarded-Host",
  "X-Forwarded-Prefix",
  "X-PINGOTHER",
  "Authorization",
  "Kurrent-LongPoll",
  "Kurrent-ExpectedVersion",
  "Kurrent-EventId",
  "Kurrent-EventType",
  "Kurrent-RequireLeader",
  "Kurrent-HardDelete",
  "Kurrent-ResolveLinkTos",
  "ES-LongPoll",
  "ES-ExpectedVersion",
  "ES-EventId",
  "ES-EventType",
  "ES-RequireMaster",
  "ES-RequireLeader",
  "ES-HardDelete",
  "ES-ResolveLinkTos"
].join(", ")

// The trailing ", " is the reference's (sic).
const ExposeHeaders = "Location, Kurrent-Position, Kurrent-CurrentVersion, ES-Position, ES-CurrentVersion, "

/** The legacy CORS headers; `methods` is "" for replies produced before a route is bound. */
export const corsHeaders = (methods: ReadonlyArray<string>): Record<string, string> => ({
  "Access-Control-Allow-Methods": methods.length === 0 ? "" : [...methods, "OPTIONS"].join(", "),
  "Access-Control-Allow-Headers": AllowHeaders,
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": ExposeHeaders
})

const BasicCustomChallenge = ['BasicCustom realm="Kurrent"', 'BasicCustom realm="ES"']

const Reasons: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  304: "Not Modified",
  307: "Temporary Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable"
}

/** The standard reason phrase of a status. */
export const standardReason = (status: number): string => Reasons[status] ?? "Unknown"

/** Visible ASCII and inner spaces, at most 512 characters: a reason phrase `safeReason` leaves as it is. */
const isSafeAlready = (text: string): boolean => {
  const n = text.length
  if (n > 512 || (n > 0 && (text.charCodeAt(0) === 32 || text.charCodeAt(n - 1) === 32))) return false
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20 || c > 0x7e) return false
  }
  return true
}

/** A reason phrase HTTP/1.1 can carry: visible ASCII and spaces only, one line, bounded. */
export const safeReason = (text: string): string => {
  if (isSafeAlready(text)) return text
  const cleaned = text
    .replace(/[\r\n\t]+/g, " ")
    .replace(/[^\x20-\x7e]/g, "?")
    .trim()
  return cleaned.length > 512 ? `${cleaned.slice(0, 509)}...` : cleaned
}

const byteLength = (body: Uint8Array | undefined): number => (body === undefined ? 0 : body.byteLength)

const hasHeader = (headers: Readonly<Record<string, unknown>>, name: string): boolean =>
  Object.keys(headers).some((k) => k.toLowerCase() === name)

export interface FinishOptions {
  /** Methods of the matched path; undefined when no route was bound. */
  readonly methods: ReadonlyArray<string> | undefined
  /** The request's Accept-Encoding, for the exact-value gzip/deflate echo. */
  readonly acceptEncoding: string | undefined
}

/** The reply as it goes on the wire (header values strings or arrays, body possibly compressed). */
export const finishReply = (reply: Reply, options: FinishOptions): Reply => {
  const headers: Record<string, string | ReadonlyArray<string>> = {}
  if (reply.bare !== true) {
    Object.assign(headers, corsHeaders(options.methods ?? []))
    if (reply.status === 401 && !hasHeader(reply.headers, "www-authenticate"))
      headers["WWW-Authenticate"] = BasicCustomChallenge
  }
  Object.assign(headers, reply.headers)
  // A text body is encoded here, once: its length needs the UTF-8 bytes anyway (measuring a feed built by
  // concatenation flattens it, and encoding it again for the socket was a second pass over every page).
  let body = typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : reply.body
  const encoding = options.acceptEncoding?.trim().toLowerCase()
  if ((encoding === "gzip" || encoding === "deflate") && byteLength(body) > 0 && reply.status !== 304) {
    body = encoding === "gzip" ? gzipSync(body!) : deflateSync(body!)
    headers["Content-Encoding"] = encoding
  }
  headers["Content-Length"] = String(byteLength(body))
  return {
    status: reply.status,
    reason: safeReason(reply.reason ?? standardReason(reply.status)),
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(reply.bare === true ? { bare: true } : {})
  }
}
