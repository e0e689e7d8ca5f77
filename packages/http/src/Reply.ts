/**
 * A framework-free HTTP reply. Route handlers and document builders produce Replies; the pipeline turns
 * them into @effect/platform responses (adding the cross-cutting headers: CORS, the Basic challenge). Keeping
 * handlers on this plain shape lets them be unit-tested without a server and called in-process by the
 * simulator.
 */
export interface Reply {
  readonly status: number
  /** HTTP/1.1 reason phrase; many ESDB errors carry their only explanation here. */
  readonly reason?: string
  /** Header names as sent; a repeated header (two WWW-Authenticate) is an array. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly body?: string | Uint8Array
  /**
   * A bare reply: the pipeline adds none of the cross-cutting headers (CORS, the BasicCustom
   * challenge on 401). Used for first-level authorization denials, which the reference
   * answers outside its entity manager.
   */
  readonly bare?: boolean
}

export const reply = (
  status: number,
  options: {
    reason?: string
    headers?: Record<string, string | ReadonlyArray<string>>
    body?: string | Uint8Array
  } = {}
): Reply => ({
  status,
  ...(options.reason !== undefined ? { reason: options.reason } : {}),
  headers: options.headers ?? {},
  ...(options.body !== undefined ? { body: options.body } : {})
})
