/**
 * One stream's share of a projection's output: the writes queued for it, item by item, and what the writer
 * knows of the stream (its exact last event number, the last position this epoch wrote to it).
 *
 * Why skipping by position is exact: every append carries whole items (an item's writes to a stream are
 * never split across appends), appends to a stream are made one at a time in the order of the items, and
 * the items' positions strictly increase. So at any moment the stream holds, of this epoch, exactly the
 * writes of every item up to some item, and of none after it; the last event's stamp names that item. After
 * a restart from a checkpoint, the items are processed again with the same positions (and the same writes):
 * those at or before the stamp are already in the stream, those after it are not.
 */
import type { CheckpointTag } from "../../persisted/checkpointTag.js"
import type { WriteCause } from "../OutputWriter.js"
import type { EmittedWrite } from "../ProjectionHandler.js"
import type { WrittenStamps } from "./writtenBefore.js"

/** One item's writes to one stream, in the order asked. */
export interface QueuedItem {
  /** The item's place in the order of enqueueing. */
  readonly seq: number
  readonly cause: WriteCause
  readonly writes: ReadonlyArray<EmittedWrite>
}

export interface StreamLane {
  readonly stream: string
  /** The tracked-streams catalogue: never truncated, de-duplicated by the stream ids it names. */
  readonly isCatalogue: boolean
  readonly queue: Array<QueuedItem>
  /** A step of this lane runs (an open, a skip, or an append: one at a time per stream). */
  busy: boolean
  opened: boolean
  /** The stream's last event number, counting the append in flight: the next append's expected version. */
  version: number
  /** The last position this epoch wrote to the stream, until an item past it comes; see above. */
  lastTag: CheckpointTag | undefined
  /** Stamps read back, for links to items written before a restart. */
  stamps: WrittenStamps | undefined
  /** By item: the number of the last event it wrote here, while another stream's link still needs it. */
  readonly numbers: Map<number, number>
  /** By item: how many links (in other streams) still need that number. */
  readonly references: Map<number, number>
  /** The catalogue only: the streams it names, written or being written. */
  tracked: Set<string> | undefined
}

export const streamLane = (stream: string, isCatalogue: boolean): StreamLane => ({
  stream,
  isCatalogue,
  queue: [],
  busy: false,
  opened: false,
  version: -1,
  lastTag: undefined,
  stamps: undefined,
  numbers: new Map(),
  references: new Map(),
  tracked: undefined
})

/** Each item's writes, grouped by stream in the order the streams first appear. */
export const writesByStream = (writes: ReadonlyArray<EmittedWrite>): Map<string, Array<EmittedWrite>> => {
  const byStream = new Map<string, Array<EmittedWrite>>()
  for (const write of writes) {
    const list = byStream.get(write.stream)
    if (list === undefined) byStream.set(write.stream, [write])
    else list.push(write)
  }
  return byStream
}

/**
 * Bytes a write takes in the log, about: its data and metadata members, plus a record's framing and the stamp
 * the writer adds (the causing position, `$v`, `$causedBy`, `$correlationId`).
 */
export const approximateBytes = (write: EmittedWrite): number => {
  let bytes = 400 + write.stream.length + write.eventType.length + write.data.length
  for (const [name, json] of write.extraMetadata) bytes += name.length + json.length + 4
  return bytes
}

/**
 * The items the next append carries: whole items from the front of the queue, at most `maxLength` events
 * (0: any number) and about `maxBytes` bytes, unless the first item alone has more (an append is one unit of
 * the log, so it must fit in a chunk), stopping before an item whose links cannot be resolved yet. `writesOf`
 * gives the writes an item still needs (the catalogue drops streams it names).
 */
export const nextBatch = (
  queue: ReadonlyArray<QueuedItem>,
  maxLength: number,
  maxBytes: number,
  linksResolved: (item: QueuedItem) => boolean,
  writesOf: (item: QueuedItem) => ReadonlyArray<EmittedWrite>
): Array<{ readonly item: QueuedItem; readonly writes: ReadonlyArray<EmittedWrite> }> => {
  const batch: Array<{ readonly item: QueuedItem; readonly writes: ReadonlyArray<EmittedWrite> }> = []
  let events = 0
  let bytes = 0
  for (const item of queue) {
    if (!linksResolved(item)) break
    const writes = writesOf(item)
    const size = writes.reduce((sum, write) => sum + approximateBytes(write), 0)
    if (batch.length > 0 && maxLength > 0 && events + writes.length > maxLength) break
    if (batch.length > 0 && bytes + size > maxBytes) break
    batch.push({ item, writes })
    events += writes.length
    bytes += size
  }
  return batch
}
