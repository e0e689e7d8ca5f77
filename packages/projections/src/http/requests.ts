/**
 * What the projection routes read from a request: query parameters (looked up ignoring case, as the
 * reference's URI templates bind them), its yes/no flags, the body as text or JSON, and who asks.
 */
import { isOpsOrAdmin, type Principal } from "@vellum/security"
import { tryParseLenientJson, type JsonValue, type RouteInput } from "@vellum/http"
import type { Requester } from "../service/Projections.js"

/** The first value of a query parameter, its name compared ignoring case; null when absent. */
export const queryParam = (input: RouteInput, name: string): string | null => {
  const exact = input.query.get(name)
  if (exact !== null) return exact
  const lower = name.toLowerCase()
  for (const [key, value] of input.query) if (key.toLowerCase() === lower) return value
  return null
}

const yes = new Set(["yes", "true", "1"])
const no = new Set(["no", "false", "0"])

/** A flag with a default: absent or empty → the default; `yes`/`true`/`1` (any case) → true; anything else false. */
export const flag = (input: RouteInput, name: string, fallback: boolean): boolean => {
  const text = queryParam(input, name)
  if (text === null || text === "") return fallback
  return yes.has(text.toLowerCase())
}

/** A flag that may be left unset: `yes`/`true`/`1` → true, `no`/`false`/`0` → false, anything else undefined. */
export const optionalFlag = (input: RouteInput, name: string): boolean | undefined => {
  const text = queryParam(input, name)?.toLowerCase()
  if (text === undefined) return undefined
  return yes.has(text) ? true : no.has(text) ? false : undefined
}

const decoder = new TextDecoder("utf-8")

/** The body as UTF-8 text ("" when none); bytes that are not UTF-8 become U+FFFD, as the reference reads them. */
export const bodyText = (input: RouteInput): string => (input.body === undefined ? "" : decoder.decode(input.body))

/** The body as a JSON object (read leniently, as the reference's JSON reader does), or undefined. */
export const jsonObjectBody = (input: RouteInput): Extract<JsonValue, { kind: "object" }> | undefined => {
  const tree = tryParseLenientJson(bodyText(input))
  return tree?.kind === "object" ? tree : undefined
}

/** Who asks: the account a projection runs as, and whether it may manage one-time and continuous ones. */
export const requesterOf = (principal: Principal): Requester => ({
  runAs: { name: principal.name, roles: [...principal.groups] },
  operator: isOpsOrAdmin(principal)
})

/** The `{name}` path placeholder (percent-decoded by the router). */
export const nameOf = (input: RouteInput): string => input.params["name"] ?? ""
