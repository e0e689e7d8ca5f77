/**
 * The 200 of every successful read (feeds, `$all`, single events, metadata): the document in the negotiated
 * type with its Cache-Control, Vary and ETag headers, honouring `DisableHttpCaching`.
 */
import { cacheHeaders, type CacheDecision } from "../atom/index.js"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"
import { documentReply } from "../replies.js"

export const cachedRead = (
  input: RouteInput,
  body: string | Uint8Array,
  decision: CacheDecision,
  cacheControlSeconds: number | undefined
): Reply =>
  documentReply(
    200,
    "OK",
    input.responseType,
    body,
    cacheHeaders(decision, {
      contentType: input.responseType,
      cacheControlSeconds,
      disableHttpCaching: input.settings.disableHttpCaching
    })
  )
