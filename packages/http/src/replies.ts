/**
 * The reply shapes the reference uses again and again, so every route family
 * answers with the same headers: status-only replies, validation 400s, bare replies, documents.
 */
import type { Reply } from "./Reply.js"

export const TextPlainUtf8 = "text/plain; charset=utf-8"

type Headers = Record<string, string | ReadonlyArray<string>>

/** A status-only reply of the stream routes (201, 204, 304, 404, 410, 500, …): empty, `text/plain; charset=utf-8`. */
export const statusReply = (status: number, reason: string, headers: Headers = {}): Reply => ({
  status,
  reason,
  headers: { "Content-Type": TextPlainUtf8, ...headers },
  body: ""
})

/**
 * A validation failure (the reference's SendBadRequest): 400 `Bad Request`, the message as a `text/plain`
 * body in ASCII (other characters become `?`, as the reference's ASCII encoding writes them).
 */
export const badRequest = (message: string): Reply => ({
  status: 400,
  reason: "Bad Request",
  headers: { "Content-Type": "text/plain" },
  body: message.replace(/[\u0080-\uffff]/g, "?")
})

/** A reply with no Content-Type and no body (route miss, 405, 406, 415, 408, 413). */
export const emptyReply = (status: number, reason: string, headers: Headers = {}): Reply => ({
  status,
  reason,
  headers
})

/** First-level authorization denial: 401 with no body, no challenge, no CORS headers. */
export const unauthorizedBare: Reply = { status: 401, reason: "Unauthorized", headers: {}, bare: true }

/** A document in the negotiated type; text types get `; charset=utf-8`. */
export const documentReply = (
  status: number,
  reason: string,
  type: string,
  body: string | Uint8Array,
  headers: Headers = {}
): Reply => ({
  status,
  reason,
  headers: { "Content-Type": type === "application/octet-stream" ? type : `${type}; charset=utf-8`, ...headers },
  body
})

/**
 * ASP.NET Core's `Results.Problem(detail, statusCode: 500)` (the reference's plugin endpoints answer server
 * errors so): an `application/problem+json` document with ASP.NET's default type and title for a 500.
 */
export const serverErrorProblem = (detail: string): Reply => ({
  status: 500,
  reason: "Internal Server Error",
  headers: { "Content-Type": "application/problem+json" },
  body: JSON.stringify({
    type: "https://tools.ietf.org/html/rfc9110#section-15.6.1",
    title: "An error occurred while processing your request.",
    status: 500,
    detail
  })
})
