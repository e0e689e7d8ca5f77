/**
 * The standard Basic challenge on a 401 to a request that carried no credentials (anonymous, or a scheme
 * Vellum does not take). The reference sends none there, so clients that wait for a challenge before
 * sending credentials (browsers, .NET's HttpClientHandler with Credentials) never send them. Two cases
 * stay without it: bad credentials keep the reference's `X-Basic` answer, and XMLHttpRequest callers
 * (`X-Requested-With: XMLHttpRequest`) get none, so a web page probing an endpoint does not pop up the
 * browser's login dialog.
 */
import type { NormalizedHeaders } from "./HttpRequest.js"
import type { Reply } from "./Reply.js"

export const BasicChallenge = 'Basic realm="Vellum", charset="UTF-8"'

const isXmlHttpRequest = (headers: NormalizedHeaders): boolean =>
  headers["x-requested-with"]?.trim().toLowerCase() === "xmlhttprequest"

/** `reply` with the Basic challenge first among its WWW-Authenticate values when it is a 401. */
export const challengeAnonymous = (reply: Reply, headers: NormalizedHeaders): Reply => {
  if (reply.status !== 401 || isXmlHttpRequest(headers)) return reply
  const name = Object.keys(reply.headers).find((k) => k.toLowerCase() === "www-authenticate")
  const existing = name === undefined ? [] : reply.headers[name]!
  const rest: Record<string, string | ReadonlyArray<string>> = { ...reply.headers }
  if (name !== undefined) delete rest[name]
  const values = typeof existing === "string" ? [BasicChallenge, existing] : [BasicChallenge, ...existing]
  return { ...reply, headers: { ...rest, "WWW-Authenticate": values.length === 1 ? BasicChallenge : values } }
}
