/**
 * The state as the phases see it (`StateAccess`, implemented by the state session in state/StateSession.ts:
 * read-your-writes lookups, changes made durable with a checkpoint or dropped by a stop), its types, and
 * the lookups the phases share: peek first (no I/O, no Effect when the row is in memory), read otherwise.
 */
import { Effect } from "effect"
import { NotResident, type MetastreamData, type OriginalStreamData } from "../state/types.js"
import type { StateAccess } from "../state/StateSession.js"

export type {
  Checkpoint,
  ChunkTimeRange,
  MetastreamData,
  OriginalStreamData,
  ScavengePointInfo
} from "../state/types.js"
export { NotResident } from "../state/types.js"
export type StreamStatus = OriginalStreamData["status"]
export type { StateAccess }

export const emptyOriginal: OriginalStreamData = {
  isTombstoned: false,
  maxAgeSeconds: undefined,
  maxCount: undefined,
  truncateBefore: undefined,
  discardPoint: 0,
  maybeDiscardPoint: 0,
  status: "Active"
}

export const lookupOriginal = <E>(
  state: StateAccess<E>,
  name: string
): Effect.Effect<OriginalStreamData | undefined, E> => {
  const peeked = state.peekOriginalStream(name)
  return peeked === NotResident ? state.originalStream(name) : Effect.succeed(peeked)
}

export const lookupMetastream = <E>(
  state: StateAccess<E>,
  name: string
): Effect.Effect<MetastreamData | undefined, E> => {
  const peeked = state.peekMetastream(name)
  return peeked === NotResident ? state.metastream(name) : Effect.succeed(peeked)
}
