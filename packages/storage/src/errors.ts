/**
 * The storage engine's typed failures. The HTTP layer maps each to a status in one place
 * (WrongExpectedVersion → 400 with the current version, StreamDeleted → 410, InvalidRequest → 400,
 * StorageFailed → 507 when the disk is full, 503 for another disk error, StorageCorrupt → 500).
 */
import { Schema } from "effect"
import type { DiskError } from "@vellum/platform"

/** Bytes on disk are not what the engine wrote: a chunk, record, checkpoint or index is damaged. */
export class StorageCorrupt extends Schema.TaggedError<StorageCorrupt>()("StorageCorrupt", {
  message: Schema.String,
  path: Schema.optional(Schema.String),
  position: Schema.optional(Schema.Number),
  /** The error that found the damage (a damaged index), when there is one. */
  cause: Schema.optional(Schema.Defect)
}) {}

/** Another store (another node process, or another open in this one) holds the data directory's lock. */
export class StorageLocked extends Schema.TaggedError<StorageLocked>()("StorageLocked", {
  message: Schema.String,
  /** The lock (NodeDisk: the lock file). */
  path: Schema.String,
  /** The disk's refusal. */
  cause: Schema.optional(Schema.Defect)
}) {}

/**
 * A write or sync failed, or writes are refused while the log recovers from such a failure. After an I/O
 * error the state of unsynced bytes is unknown ("fsyncgate"): the failed write is never acknowledged, and
 * the log restores its last acknowledged state (durably) before it accepts another write.
 *
 * `message` is for clients and names no file; `detail` (the disk's own error, with the path) is for the log.
 */
export class StorageFailed extends Schema.TaggedError<StorageFailed>()("StorageFailed", {
  message: Schema.String,
  /** DiskFull: space must be freed (HTTP 507); IOError: another disk error (503). Absent: neither. */
  reason: Schema.optional(Schema.Literal("DiskFull", "IOError")),
  detail: Schema.optional(Schema.String),
  /** The disk's error, when one stopped the writes. */
  cause: Schema.optional(Schema.Defect)
}) {}

/** The refusal a failed log write leads to, by what the disk said. */
export const writesRefused = (error: DiskError): StorageFailed =>
  error.reason === "DiskFull"
    ? new StorageFailed({
        message: "the disk is full: writes are refused until space is freed",
        reason: "DiskFull",
        detail: error.message,
        cause: error
      })
    : new StorageFailed({
        message: "a disk error stopped writes: they resume once the disk works again",
        reason: "IOError",
        detail: error.message,
        cause: error
      })

export class WrongExpectedVersion extends Schema.TaggedError<WrongExpectedVersion>()("WrongExpectedVersion", {
  stream: Schema.String,
  expectedVersion: Schema.Number,
  /** The stream's last event number (-1 when it has none; the deleted marker when hard-deleted). */
  currentVersion: Schema.Number
}) {
  override get message() {
    return `Wrong expected version: expected ${this.expectedVersion} but the stream '${this.stream}' is at ${this.currentVersion}`
  }
}

export class StreamDeleted extends Schema.TaggedError<StreamDeleted>()("StreamDeleted", {
  stream: Schema.String
}) {
  override get message() {
    return `Stream '${this.stream}' has been deleted`
  }
}

/** The request itself is invalid (empty stream name, event too large, bad event id, …). */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String
}) {}

/**
 * A write was not durable within the write timeout (the disk stalls). Its outcome is unknown: it may still
 * become durable, so a client must treat it as indeterminate (the reference's CommitTimeout).
 */
export class WriteTimeout extends Schema.TaggedError<WriteTimeout>()("WriteTimeout", {
  timeoutMillis: Schema.Number
}) {
  override get message() {
    return `the write was not durable within ${this.timeoutMillis} ms; it may still be written`
  }
}

/** Why a read of the log failed: its bytes are damaged, or the disk itself failed. */
export type ReadError = StorageCorrupt | DiskError

/**
 * A clustered store that does not lead refuses client writes (they go to the leader): before it is told to
 * lead, and after it stopped leading. HTTP routing normally answers before the store is reached.
 */
export class NotLeader extends Schema.TaggedError<NotLeader>()("NotLeader", {
  message: Schema.String
}) {}

/**
 * A clustered write was durable here but not known to be on a quorum in time (or the node stopped leading
 * while it waited). Its outcome is unknown: it may still commit, or be cut when another node leads.
 */
export class CommitTimeout extends Schema.TaggedError<CommitTimeout>()("CommitTimeout", {
  message: Schema.String
}) {}
