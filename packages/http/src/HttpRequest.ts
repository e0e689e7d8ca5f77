/**
 * The request the pipeline processes: what the live adapter reads off a socket and what the simulator
 * builds in-process. Headers may come with any name case and repeated values; `normalizeHeaders` gives
 * the lower-cased, comma-joined view handlers see.
 */
export interface HttpRequest {
  readonly method: string
  /** The request target as sent: origin-form (`/streams/a?embed=body`) or absolute-form. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: Uint8Array | undefined
  /** The body passed the size limit while being read: it was discarded unread and `body` is undefined. */
  readonly bodyTooLarge?: boolean
  /** The peer's address, for logs. */
  readonly remote?: string
  /** The connection's scheme (`https` behind TLS); `http` when absent. */
  readonly scheme?: "http" | "https"
  /**
   * Another member passed it on (leader forwarding, forwarding/): this node answers it itself and never
   * passes it on again. Set only by the internal channel's server, never from anything a client sends.
   */
  readonly forwarded?: boolean
}

export type NormalizedHeaders = Readonly<Record<string, string | undefined>>

/** Lower-cased names; a repeated header's values joined with ", " (RFC 9110 §5.3). */
export const normalizeHeaders = (headers: HttpRequest["headers"]): NormalizedHeaders => {
  const out: Record<string, string> = {}
  for (const name of Object.keys(headers)) {
    const value = headers[name]
    if (value === undefined) continue
    const text = typeof value === "string" ? value : value.join(", ")
    const key = name.toLowerCase()
    out[key] = out[key] === undefined ? text : `${out[key]}, ${text}`
  }
  return out
}

/**
 * The first non-empty value among header names, tried in order: the reference reads `Kurrent-*` first
 * and falls back to the legacy `ES-*` name.
 */
export const firstHeader = (headers: NormalizedHeaders, ...names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    const value = headers[name]
    if (value !== undefined && value !== "") return value
  }
  return undefined
}
