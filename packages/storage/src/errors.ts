/**
 * The storage engine's typed failures. The HTTP layer maps each to a status in one place
 * (WrongExpectedVersion → 400 with the current version, StreamDeleted → 410, InvalidRequest → 400,
 * StorageCorrupt / StorageFailed → 500 with a clear message and the node failing over).
 */
import { Schema } from "effect"

/** Bytes on disk are not what the engine wrote: a chunk, record, checkpoint or index is damaged. */
export class StorageCorrupt extends Schema.TaggedError<StorageCorrupt>()("StorageCorrupt", {
  message: Schema.String,
  path: Schema.optional(Schema.String),
  position: Schema.optional(Schema.Number)
}) {}

/** Another store (another node process, or another open in this one) holds the data directory's lock. */
export class StorageLocked extends Schema.TaggedError<StorageLocked>()("StorageLocked", {
  message: Schema.String,
  /** The lock (NodeDisk: the lock file). */
  path: Schema.String
}) {}

/**
 * A write or sync failed. After an I/O error the state of unsynced bytes is unknown ("fsyncgate"), so the
 * engine stops accepting writes (fail-stop); a restart recovers from what is durable.
 */
export class StorageFailed extends Schema.TaggedError<StorageFailed>()("StorageFailed", {
  message: Schema.String
}) {}

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
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

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
