/**
 * Storage failures as HTTP replies, in one place (spec/http.md §3.4, §3.10, §8):
 * WrongExpectedVersion → 400 `Wrong expected EventNumber` with both CurrentVersion headers,
 * StreamDeleted → 410 `Stream deleted`, InvalidRequest → 400 with the reason as body,
 * StorageFailed / StorageCorrupt → 500 with the error text as reason phrase, WriteTimeout (the disk stalled
 * past the write timeout) → 408 as the reference's request deadline answers (the write may still happen).
 */
import { DeletedStreamNumber, LongMaxValueText, type AppendError, type ReadFailure } from "@vellum/storage"
import type { Reply } from "./Reply.js"
import { badRequest, statusReply } from "./replies.js"

/** Event numbers on the wire: the internal tombstone number is long.MaxValue there. */
export const wireEventNumber = (n: number): string => (n === DeletedStreamNumber ? LongMaxValueText : String(n))

export const wrongExpectedVersionReply = (currentVersion: number): Reply =>
  statusReply(400, "Wrong expected EventNumber", {
    "Kurrent-CurrentVersion": wireEventNumber(currentVersion),
    "ES-CurrentVersion": wireEventNumber(currentVersion)
  })

export const storageErrorReply = (error: AppendError | ReadFailure): Reply => {
  switch (error._tag) {
    case "WrongExpectedVersion":
      return wrongExpectedVersionReply(error.currentVersion)
    case "StreamDeleted":
      return statusReply(410, "Stream deleted")
    case "InvalidRequest":
      return badRequest(error.reason)
    case "WriteTimeout":
      return statusReply(408, "Server was unable to handle request in time")
    case "StorageFailed":
    case "StorageCorrupt":
      return statusReply(500, error.message)
  }
}
