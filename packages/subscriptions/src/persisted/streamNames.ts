/**
 * The names the reference gives a group's streams and records, kept so that a reader of our log sees the
 * reference's layout: one system stream of every group's definition, and per group a checkpoint stream and a
 * parked-messages stream, both named after the group's key `{stream}::{group}`.
 */

/** The stream holding every group's definition (its last event is the whole current set). */
export const definitionsStream = "$persistentSubscriptionConfig"
/** The event type of a definitions record. */
export const definitionsEventType = "$PersistentConfig"
/** The event type of a checkpoint (the reference also reads one without the `$`). */
export const checkpointEventType = "$SubscriptionCheckpoint"
export const legacyCheckpointEventType = "SubscriptionCheckpoint"
/** The event type of a link, as parked messages are written. */
export const linkEventType = "$>"
/** The event type of a stream's metadata record. */
export const metadataEventType = "$metadata"

/** A group's key: `{stream}::{group}`. */
export const groupKey = (stream: string, group: string): string => `${stream}::${group}`

/** `$persistentsubscription-{stream}::{group}-checkpoint`. */
export const checkpointStream = (stream: string, group: string): string =>
  `$persistentsubscription-${groupKey(stream, group)}-checkpoint`

/** `$persistentsubscription-{stream}::{group}-parked`. */
export const parkedStream = (stream: string, group: string): string =>
  `$persistentsubscription-${groupKey(stream, group)}-parked`
