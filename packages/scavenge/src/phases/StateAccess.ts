/**
 * The state as the phases see it (`StateAccess`, implemented by the state session in state/StateSession.ts:
 * read-your-writes lookups, changes made durable with a checkpoint or dropped by a stop), and its types.
 */
import type { OriginalStreamData } from "../state/types.js"

export type { Checkpoint, ChunkTimeRange, MetastreamData, OriginalStreamData, ScavengePointInfo } from "../state/types.js"
export type StreamStatus = OriginalStreamData["status"]

export const emptyOriginal: OriginalStreamData = {
  isTombstoned: false, maxAgeSeconds: undefined, maxCount: undefined, truncateBefore: undefined, discardPoint: 0, maybeDiscardPoint: 0, status: "Active"
}

export type { StateAccess } from "../state/StateSession.js"
