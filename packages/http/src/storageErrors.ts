/**
 * Storage failures as HTTP replies, in one place:
 * WrongExpectedVersion → 400 `Wrong expected EventNumber` with both CurrentVersion headers,
 * StreamDeleted → 410 `Stream deleted`, InvalidRequest → 400 with the reason as body,
 * StorageFailed (writes refused after a disk error, until the log has recovered) → 507 Insufficient
 * Storage when the disk is full, 503 Service Unavailable otherwise, with `Retry-After` and the reason as
 * body — never a file name (the node's log has the path); StorageCorrupt → 500 with the error text as reason
 * phrase; DiskError (a disk read failed: transient, not damage) → 503 with `Retry-After`, naming no file;
 * WriteTimeout (the disk stalled past the write timeout) and CommitTimeout (a clustered write not on a quorum
 * in time, or its leader stepped down) → 408 as the reference's request deadline answers (the write may
 * still happen); NotLeader (a clustered node that does not lead; routing normally answers before the
 * store is reached) → 503 with `Retry-After` and the reason as body.
 */
import {
  DeletedStreamNumber,
  LongMaxValueText,
  type AppendError,
  type ReadFailure,
  type StorageFailed
} from "@vellum/storage"
import type { Reply } from "./Reply.js"
import { badRequest, statusReply } from "./replies.js"

/** Event numbers on the wire: the internal tombstone number is long.MaxValue there. */
export const wireEventNumber = (n: number): string => (n === DeletedStreamNumber ? LongMaxValueText : String(n))

export const wrongExpectedVersionReply = (currentVersion: number): Reply =>
  statusReply(400, "Wrong expected EventNumber", {
    "Kurrent-CurrentVersion": wireEventNumber(currentVersion),
    "ES-CurrentVersion": wireEventNumber(currentVersion)
  })

/** The status of refused writes: 507 for a full disk (space must be freed), 503 for another disk error. */
export const writesRefusedStatus = (reason: StorageFailed["reason"]): readonly [number, string] =>
  reason === "DiskFull" ? [507, "Insufficient Storage"] : [503, "Service Unavailable"]

/** Seconds a client should wait before retrying a refused write (the writer retries its recovery as often). */
export const RefusedRetryAfter = "5"

const writesRefusedReply = (error: StorageFailed): Reply => {
  const [status, reason] = writesRefusedStatus(error.reason)
  return { ...statusReply(status, reason, { "Retry-After": RefusedRetryAfter }), body: `${error.message}\n` }
}

/** A read the disk failed: the same request may succeed later (the node's log names the file). */
const diskReadFailedReply: Reply = {
  ...statusReply(503, "Service Unavailable", { "Retry-After": RefusedRetryAfter }),
  body: "a disk read failed: try again later\n"
}

export const storageErrorReply = (error: AppendError | ReadFailure): Reply => {
  switch (error._tag) {
    case "WrongExpectedVersion":
      return wrongExpectedVersionReply(error.currentVersion)
    case "StreamDeleted":
      return statusReply(410, "Stream deleted")
    case "InvalidRequest":
      return badRequest(error.message)
    case "WriteTimeout":
    case "CommitTimeout":
      return statusReply(408, "Server was unable to handle request in time")
    case "NotLeader":
      return { ...statusReply(503, "Not Leader", { "Retry-After": RefusedRetryAfter }), body: `${error.message}\n` }
    case "StorageFailed":
      return writesRefusedReply(error)
    case "StorageCorrupt":
      return statusReply(500, error.message)
    case "DiskError":
      return diskReadFailedReply
  }
}
