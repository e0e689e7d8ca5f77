/**
 * A projection's source: the events its selector names (`fromAll`, `fromStream(s)`, `fromCategory`), filtered
 * as the reference filters them before any handler runs, in the order it processes them, each with the
 * position (checkpoint tag) processing it leads to. The engine reads batches after a tag and never sees what
 * the filters dropped, but the tag of a batch moves past it, so a checkpoint never re-reads it.
 */
import type { Effect } from "effect"
import type { EventRecord, ReadFailure } from "@vellum/storage"
import type { CheckpointTag } from "../persisted/checkpointTag.js"

export interface SourceItem {
  /**
   * `event`: an event for the handlers. `deleted`: a source stream was deleted (a tombstone, or a `$$x`
   * metadata event whose `$tb` is long.MaxValue): given only to `foreachStream` projections that handle
   * deletions, with `event` = the record announcing the deletion.
   */
  readonly kind: "event" | "deleted"
  /** The record the handlers see: a resolved link's target, otherwise the record as it lies in the source. */
  readonly event: EventRecord
  /** The link `event` was reached through (stream sources resolve links), else undefined. */
  readonly link: EventRecord | undefined
  /** Where the projection is once this item is processed. */
  readonly tag: CheckpointTag
  /** Log position of the record read from the source (the link when there is one): for lag and progress. */
  readonly logPosition: number
  /** The category of a single-category source (`fromCategory('c')` → "c"), else null. */
  readonly category: string | null
  /**
   * The stream this item belongs to for `foreachStream`: the event's stream, a link's `$o` when it carries one,
   * `x` for an event of `$$x`, the deleted stream for a deletion.
   */
  readonly partitionStream: string
}

export interface SourceBatch {
  /** In processing order; may be empty when everything read was filtered out. */
  readonly items: ReadonlyArray<SourceItem>
  /** Where the next read starts: the last item's tag, or further when filtered records followed it. */
  readonly next: CheckpointTag
  /** Nothing more was committed after `next` when this batch was read (one-time projections stop here). */
  readonly atEnd: boolean
  /** Bytes of log read past without an item (for the checkpoint-after-unhandled-bytes rule). */
  readonly skippedBytes: number
  /** Log position the read reached (for lag: the committed end minus this). */
  readonly logPosition: number
}

export interface SourceReader {
  /** The tag of a projection that has processed nothing. */
  readonly startTag: CheckpointTag
  /**
   * Up to `maxItems` items after `after` (a tag this source produced, or `startTag`). Reads only what is
   * committed. Deterministic: the same log gives the same batches, whatever the batch sizes.
   */
  readonly read: (after: CheckpointTag, maxItems: number) => Effect.Effect<SourceBatch, ReadFailure>
  /** Whether a commit to these streams may give this source more (a `$all` source: always true). */
  readonly touches: (streams: ReadonlyArray<string>) => boolean
}
