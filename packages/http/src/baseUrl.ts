/**
 * Absolute URLs. The base of links, entry ids and Locations is built from the request
 * Host, then the advertised host/port, then `X-Forwarded-Port`, `X-Forwarded-Proto`, `X-Forwarded-Host`
 * (which may carry a port) and `X-Forwarded-Prefix`, in that order of increasing priority; default ports
 * are omitted. The raw request URL (for the redirects that use it) takes only the Host header.
 */
import type { NormalizedHeaders } from "./HttpRequest.js"

export interface Authority {
  readonly scheme: string
  readonly host: string
  /** undefined: the scheme's default. */
  readonly port: number | undefined
}

const DefaultPorts: Readonly<Record<string, number>> = { http: 80, https: 443 }

/** Splits `host[:port]`, IPv6 literals (`[::1]:2113`) included. */
export const splitHostPort = (value: string): { readonly host: string; readonly port: number | undefined } => {
  const text = value.trim()
  const bracket = text.startsWith("[") ? text.indexOf("]") : -1
  const colon = bracket >= 0 ? text.indexOf(":", bracket) : text.lastIndexOf(":")
  if (colon < 0 || (bracket < 0 && text.indexOf(":") !== colon)) return { host: text, port: undefined }
  const port = parsePort(text.slice(colon + 1))
  return { host: text.slice(0, colon), port }
}

const parsePort = (text: string): number | undefined => {
  if (!/^\d{1,5}$/.test(text.trim())) return undefined
  const port = Number(text.trim())
  return port <= 65535 ? port : undefined
}

/** Only characters that may appear in a URL authority survive (a hostile Host header cannot inject). */
const safeHost = (host: string): string => host.replace(/[^A-Za-z0-9.\-_~[\]:%]/g, "")

const formatAuthority = (a: Authority): string => {
  const port = a.port === undefined || a.port === DefaultPorts[a.scheme.toLowerCase()] ? "" : `:${a.port}`
  return `${a.scheme}://${safeHost(a.host) || "localhost"}${port}`
}

const fromHostHeader = (headers: NormalizedHeaders, scheme: string): Authority => {
  const { host, port } = splitHostPort(headers["host"] ?? "localhost")
  return { scheme, host, port }
}

export interface AdvertiseAs {
  readonly advertiseHost?: string | undefined
  readonly advertisePort?: number | undefined
}

/**
 * `scheme://host` from the Host header alone, remembered: every request needs it (twice: base URL and raw
 * request URL) and nearly all carry one of a few Host values. The Host header is the client's, so the memo
 * is bounded (emptied when full).
 */
const hostAuthorities = new Map<string, string>()
const HOST_MEMO_LIMIT = 256

const hostAuthority = (headers: NormalizedHeaders, scheme: string): string => {
  const key = scheme + " " + (headers["host"] ?? "")
  let authority = hostAuthorities.get(key)
  if (authority === undefined) {
    authority = formatAuthority(fromHostHeader(headers, scheme))
    if (hostAuthorities.size >= HOST_MEMO_LIMIT) hostAuthorities.clear()
    hostAuthorities.set(key, authority)
  }
  return authority
}

/** `scheme://host[:port][/prefix]`, without a trailing slash. */
export const buildBaseUrl = (headers: NormalizedHeaders, connectionScheme: string, advertise: AdvertiseAs): string => {
  const advertisedHost =
    advertise.advertiseHost !== undefined && advertise.advertiseHost !== "" ? advertise.advertiseHost : undefined
  const advertisedPort =
    advertise.advertisePort !== undefined && advertise.advertisePort > 0 ? advertise.advertisePort : undefined
  const forwardedPort = headers["x-forwarded-port"]
  const forwardedProto = headers["x-forwarded-proto"]
  const forwardedHost = headers["x-forwarded-host"]
  if (
    advertisedHost === undefined &&
    advertisedPort === undefined &&
    forwardedPort === undefined &&
    forwardedProto === undefined &&
    forwardedHost === undefined &&
    headers["x-forwarded-prefix"] === undefined
  ) {
    return hostAuthority(headers, connectionScheme)
  }
  let { scheme, host, port } = fromHostHeader(headers, connectionScheme)
  if (advertisedHost !== undefined) host = advertisedHost
  if (advertisedPort !== undefined) port = advertisedPort
  if (forwardedPort !== undefined) port = parsePort(firstItem(forwardedPort)) ?? port
  if (forwardedProto !== undefined && /^[a-zA-Z][a-zA-Z0-9+.-]*$/.test(firstItem(forwardedProto)))
    scheme = firstItem(forwardedProto)
  if (forwardedHost !== undefined && firstItem(forwardedHost) !== "") {
    const split = splitHostPort(firstItem(forwardedHost))
    host = split.host
    if (split.port !== undefined) port = split.port
  }
  return formatAuthority({ scheme, host, port }) + forwardedPrefix(headers)
}

/** `/p` for `X-Forwarded-Prefix: p` (or `/p`); "" when absent. */
const forwardedPrefix = (headers: NormalizedHeaders): string => {
  const raw = headers["x-forwarded-prefix"]
  if (raw === undefined) return ""
  const trimmed = firstItem(raw).replace(/^\/+|\/+$/g, "")
  if (trimmed === "") return ""
  // Keep it a path: no scheme, query or fragment characters from a header.
  return `/${trimmed.replace(/[?#\s]/g, "")}`
}

const firstItem = (value: string): string => value.split(",")[0]!.trim()

/** The request URL as the client addressed it (Host header only): for the incoming and trailing-slash 307s. */
export const rawRequestUrl = (
  headers: NormalizedHeaders,
  connectionScheme: string,
  rawPath: string,
  rawQuery: string
): string => hostAuthority(headers, connectionScheme) + rawPath + (rawQuery === "" ? "" : `?${rawQuery}`)
