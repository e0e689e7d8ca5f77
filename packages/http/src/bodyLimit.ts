/**
 * The request body limit, which is MaxAppendSize: no route takes a body larger than an append may be, so
 * one number bounds what a request can make the node buffer and parse. A body over it is refused before
 * it is parsed (the live adapter stops reading it), and an append whose events come to more than it once
 * decoded is refused before it is written. Stream routes answer with the reference's message for the
 * limit; others say what the limit is.
 */
import type { Reply } from "./Reply.js"
import { emptyReply } from "./replies.js"

export const maxAppendSizeExceeded = (limit: number): Reply =>
  emptyReply(413, `Maximum Append Size of ${limit} Exceeded.`)

/** The 413 for a body over `limit`, by the first decoded path segment of the request. */
export const bodyTooLargeReply = (firstSegment: string | undefined, limit: number): Reply =>
  firstSegment === "streams"
    ? maxAppendSizeExceeded(limit)
    : emptyReply(413, `Request body too large. Limit is ${limit} bytes.`)
